"""A lone surrogate in an experience gets the documented message, naming the field (hunt
i18n #12).

`experiences.record(task="…\\ud83d")` said "invalid experience: task: Input should be a valid
string, unable to parse raw data as a unicode string" where docs/api.md promises "task is not valid
Unicode text (it holds a lone surrogate)", as `learn` and `context_for` say it. In process and
through a client of another process that owns the root (the wire carries the surrogate).
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.errors import InvalidInputError

SURROGATE = "half an emoji \ud83d"


@pytest.mark.parametrize("field, named", [
    ({"task": SURROGATE}, "task"), ({"feedback": SURROGATE}, "feedback"),
    ({"when_to_use": SURROGATE}, "when_to_use"), ({"lessons": [SURROGATE]}, "lessons[0]"),
    ({"steps": [{"action": SURROGATE}]}, "steps[0].action"), ({"tags": [SURROGATE]}, "tag"),
])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_lone_surrogate_in_a_record_is_named(tmp_path, remote, field, named):
    arguments = {"task": "Migrate the users table", "outcome": "failure", **field}
    with bank_for(tmp_path, remote) as bank:
        with pytest.raises(InvalidInputError) as caught:
            bank.experiences.record(**arguments)
    assert f"{named} is not valid Unicode text (it holds a lone surrogate)" in str(caught.value)
