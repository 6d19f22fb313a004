"""Infrastructure-as-code and academic rules are filed under topics of their own.

Users met Terraform rules filed as sql ("Never hardcode passwords in .tf files ...", the task
named Postgres) or javascript ("Pin the provider version ...", the task named an EKS node
group), and "Keep the abstract under 200 words." filed as slides; those rules were then served
for SQL and React tasks (learning-loop hunt, session 20, defect 10).
"""

from __future__ import annotations

import pytest

from skillbank.distill import RuleDistiller
from skillbank.distill.topics import topic_family


@pytest.mark.parametrize("critique, task, topic", [
    ("Never commit secrets to .tfvars files.", "Create a Terraform stack for a MySQL database",
     "infra"),
    ("Set resource limits on every pod.", "Write the Helm chart for the orders service", "infra"),
    ("Pin the module version.", "Write Terraform for a GKE node pool", "infra"),
    ("Run the Ansible playbook with --check first.", "Patch the web servers", "infra"),
    ("Keep the abstract under 150 words.", "Draft the abstract of our paper on protein folding",
     "academic"),
    ("State the hypothesis before the methods.", "Write the introduction of the manuscript",
     "academic"),
])
def test_the_rule_is_filed_under_its_domain(critique, task, topic):
    (rule,) = [r for r in RuleDistiller().rules_from_critique(critique, task=task) if r.actionable]
    assert rule.topic == topic, rule


def test_academic_writing_is_in_the_writing_family_and_infra_stands_alone():
    assert topic_family("academic") == "writing"
    assert topic_family("infra") == "infra"


def test_a_node_package_is_still_javascript():
    (rule,) = RuleDistiller().rules_from_critique("Pin the node version in package.json.",
                                                   task="Set up the React app")
    assert rule.topic == "javascript"
