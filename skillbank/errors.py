"""Errors every face can turn into a clear message (CLI exit codes, MCP ToolError, exceptions)."""

from __future__ import annotations

from typing import Any


class SkillbankError(Exception):
    """Base class: the message is written for the person or model that made the call."""

    exit_code = 1


class NotFoundError(SkillbankError, KeyError):
    exit_code = 3

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "not found"


class AlreadyExistsError(SkillbankError):
    exit_code = 4


class ReadOnlyError(SkillbankError):
    exit_code = 5


class InvalidInputError(SkillbankError, ValueError):
    """Input that breaks a rule; `findings` lists each problem when there are several."""

    exit_code = 2

    def __init__(self, message: str, findings: list[Any] | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])


class PermissionDeniedError(SkillbankError):
    """The caller is not trusted for this operation (e.g. an untrusted client asking to forget)."""

    exit_code = 7


class BusyError(SkillbankError):
    """Another process holds the memory root (embedded mode allows one process at a time)."""

    exit_code = 6
