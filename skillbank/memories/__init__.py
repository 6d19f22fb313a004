"""The three memories, one package each: skills (the SKILL.md library), experiences, guidelines.

A memory imports only the kernel (`skillbank.records`, `skillbank.index`, `skillbank.distill`, …),
never another memory or a face; the facade (`skillbank.bank`) wires them together.
"""
