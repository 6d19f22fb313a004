"""Security scans of skills, in the background, cached by content digest.

The optional extra `skillbank[scan]` installs `cisco-ai-skill-scanner` (Apache-2.0; static
YAML/YARA-X rules, AST and dataflow analysis, SARIF output). Its offline analyzers run in a
worker process (`scan_worker.py`) fed one skill folder at a time, the way the index fills
vectors: sync stays fast, scans catch up behind it, and a skill is scanned again only when one
of its files changes (results are keyed by the version digest of all its files, `pins.py`).

Results live in `<root>/skill-scans/<version>.json`, beside the files that are the truth, so
they survive `reindex`; every process opening the root reads the same results.

Failure is a result, never an exception: a scan that crashes, or a skill that changed while it
was scanned, is stored as `scan failed: <why>` and the skill counts as unscanned (the next
explicit scan tries again). A scan that times out is a critical finding, `SCAN_TIMEOUT`: how
long a scan takes is the skill author's to choose, and "unscanned" served a third-party skill
whose script made the scanner time out. A script the scanner cannot read (over 1 MiB, or binary-looking; a script by its
suffix, shebang, executable bit or place under `scripts/`), or any file over the scanner's own
10 MiB limit, is no failure but a critical finding, `UNSCANNABLE_SCRIPT`: counted as
unscanned, a malicious script padded past the limit was served with a note where the same
script unpadded was held. The worker is killed after `timeout` seconds and restarted.
A scan cut short by closing the bank is no result and is not stored (the skill is scanned
again by the next process), and an explicit scan (`TrustBook.scan_now`) always scans a failed
one again: a short CLI command used to kill the scan of a changed skill on exit, and its
"scan failed" was cached for that version for good, so the skill was served unscanned.

The scanner's interpreter: `SKILLBANK_SCANNER_PYTHON` (or `[skill_scan] python` in
skillbank.toml) names one — useful because the scanner pins dependencies (litellm, protobuf
6, rich 14 …) a bank's own venv may not want; otherwise this interpreter, when the scanner is
importable here. Without either, scanning is unavailable and third-party skills say
"not scanned".
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillbank.fsutil import atomic_write
from skillbank.memories.skills import pins
from skillbank.records import SecurityFinding

log = logging.getLogger("skillbank.skills.scan")

SCANS_DIR = "skill-scans"
WORKER = Path(__file__).with_name("scan_worker.py")
#: A scan of one skill taking longer than this is a failed scan (the worker is restarted).
DEFAULT_TIMEOUT = 60.0
#: How long the worker may take to load its rules before the scanner counts as broken.
START_TIMEOUT = 180.0
#: Scripts the scanner would have to read whole: refused over this size, or when binary.
MAX_SCRIPT_BYTES = 1 << 20
SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".rb",
                             ".pl", ".ps1", ".php", ".lua", ".bat", ".cmd"})
#: The scanner's own limit (its policy's `max_loader_file_size_bytes`): it reads no file over
#: this, whatever its kind, so nothing in it is analysed.
SCANNER_LOADER_BYTES = 10 * 1024 * 1024
#: A folder with more files than this is not walked to its end by the precheck: unscannable.
MAX_PRECHECK_FILES = 50_000
#: The generation of skillbank's own checks (`precheck`, `hidden_text`), kept with each
#: result: a result stored by an earlier one is checked again (a skill it let through was
#: served from the cache after the upgrade).
PRECHECK_VERSION = 3
#: What a scan reports as hidden text: tag characters and bidirectional overrides (no skill
#: needs them), not zero-width joiners or a byte order mark (emoji, scripts, editors).
HIDDEN_TEXT = re.compile("[\U000E0000-\U000E007F\u202A-\u202E\u2066-\u2069]")
HIDDEN_RULE = "HIDDEN_TEXT"
#: The finding a script the scanner cannot read becomes (`unscannable`).
UNSCANNABLE_RULE = "UNSCANNABLE_SCRIPT"
#: The finding a scan that did not finish in time becomes (`timed_out`).
TIMEOUT_RULE = "SCAN_TIMEOUT"
SEVERITY_ORDER = ("critical", "high", "medium", "low", "info")
INSTALL_HINT = ("install the scanner to scan skills: pip install -e '.[scan]' in your skillbank "
                "clone (Python >= 3.11), or put cisco-ai-skill-scanner in another venv and set "
                "SKILLBANK_SCANNER_PYTHON to its python")


@dataclass
class ScanResult:
    """What one scan of one version of a skill found (or why it could not say)."""

    version: str
    status: str  # "clean" | "findings" | "scan failed: <why>"
    findings: list[SecurityFinding] = field(default_factory=list)
    seconds: float = 0.0
    scanner: str = ""
    at: float = 0.0
    checks: int = PRECHECK_VERSION

    @property
    def failed(self) -> bool:
        return self.status.startswith("scan failed")

    @property
    def timed_out(self) -> bool:
        return any(f.rule == TIMEOUT_RULE for f in self.findings)

    @property
    def worst(self) -> str | None:
        for severity in SEVERITY_ORDER:
            if any(f.severity == severity for f in self.findings):
                return severity
        return None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "status": self.status, "seconds": self.seconds,
                "scanner": self.scanner, "at": self.at, "checks": self.checks,
                "findings": [f.model_dump() for f in self.findings]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ScanResult":
        return cls(version=str(data["version"]), status=str(data["status"]),
                   findings=[SecurityFinding(**f) for f in data.get("findings", [])],
                   seconds=float(data.get("seconds", 0.0)), scanner=str(data.get("scanner", "")),
                   at=float(data.get("at", 0.0)), checks=int(data.get("checks", 1)))


def scanner_python(configured: str | None = None) -> str | None:
    """The interpreter to scan with, or None when no scanner is installed anywhere we know."""
    named = os.environ.get("SKILLBANK_SCANNER_PYTHON") or configured
    if named:
        return named
    if importlib.util.find_spec("skill_scanner") is not None:
        return sys.executable
    return None


#: How programs a system runs directly begin: ELF, Mach-O (both byte orders, 32/64-bit, fat)
#: and PE ("MZ"). A binary file under `scripts/` or with the executable bit that begins
#: otherwise (a PNG, a PDF, a font, a zip) is data.
EXECUTABLE_MAGIC = (b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe",
                    b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ")


def _named_script(relative: str, stat: os.stat_result) -> bool:
    """A script by its name, mode or place: a known suffix (or bytecode, `.pyc`), the
    executable bit, `scripts/`."""
    suffix = Path(relative).suffix.lower()
    return (suffix in SCRIPT_SUFFIXES or suffix == ".pyc" or bool(stat.st_mode & 0o111)
            or relative.startswith("scripts/"))


def _binary_code(relative: str, head: bytes) -> bool:
    """Whether a binary file is code rather than data, judged by its content: a shebang, an
    executable's magic number, a script suffix or bytecode. By name, mode or place alone, a
    `logo.png` with the executable bit a Windows-made zip left on it was "a binary script" and
    held a harmless third-party skill (review #5)."""
    suffix = Path(relative).suffix.lower()
    return (head.startswith(b"#!") or head.startswith(EXECUTABLE_MAGIC)
            or suffix in SCRIPT_SUFFIXES or suffix == ".pyc")


def precheck(folder: Path) -> tuple[str, str] | None:
    """(file, why) when part of a skill cannot be scanned, before a worker sees it: a script
    that is binary or over `MAX_SCRIPT_BYTES`, or any file over the scanner's own limit.

    A script is any file a skill may run: a known suffix, a shebang, the executable bit or a
    place under `scripts/`; a binary one only when its content is code (`_binary_code`), and
    never a `.pyc` Python wrote from the `.py` beside it. Judged by suffix alone, `scripts/run` (shebang, +x) padded to 11 MB
    passed: the scanner dropped its high finding and the third-party skill was served."""
    from skillbank.memories.skills.resources import open_for_hash

    files, complete = pins.every_file(folder, MAX_PRECHECK_FILES)
    if not complete:
        return ".", f"the folder has more than {MAX_PRECHECK_FILES} files"
    for relative, stat in files:
        if stat.st_size > SCANNER_LOADER_BYTES:
            return relative, (f"file {relative} is {stat.st_size} bytes (over the scanner's "
                              f"limit of {SCANNER_LOADER_BYTES})")
        named = _named_script(relative, stat)
        try:
            with open_for_hash(folder / relative) as handle:  # never blocks on a FIFO
                head = handle.read(8192)
        except OSError as exc:
            if named:
                return relative, f"script {relative} cannot be read: {exc}"
            continue
        if not (named or head.startswith(b"#!")):
            continue
        if pins.self_written_pyc(folder / relative, stat):
            continue  # what running the skill's own Python once writes (pins.self_written_pyc)
        if b"\0" in head and not _binary_code(relative, head):
            continue  # data that happens to be executable or under scripts/
        if stat.st_size > MAX_SCRIPT_BYTES:
            return relative, f"script {relative} is {stat.st_size} bytes (over {MAX_SCRIPT_BYTES})"
        if b"\0" in head:
            return relative, f"script {relative} is a binary file"
    return None


def unscannable(version: str, script: str, why: str, at: float) -> ScanResult:
    """The result for a skill with a script the scanner cannot read: a critical finding.

    Padding a script past the limit, or a NUL byte near its start, must not turn "held" into
    "served with a note" (the default for an unscanned third-party skill): what cannot be
    looked at holds a skill that is not the bank's own until a reviewer reads it."""
    finding = SecurityFinding(severity="critical", rule=UNSCANNABLE_RULE, category="unscannable",
                              title=f"cannot be scanned: {why}; read it before accepting",
                              file=script)
    return ScanResult(version, "findings", [finding], scanner="skillbank precheck", at=at)


def hidden_text(folder: Path) -> list[SecurityFinding]:
    """A finding per served file holding characters a person cannot see (tag characters,
    bidi overrides): a third-party skill's frontmatter and references carried a hidden "Ignore
    all previous instructions" that faces now drop, but a reviewer should be told it was there.
    Files over `MAX_SCRIPT_BYTES` are not read (the scan of their kind covers them)."""
    found = []
    for relative, stat in pins.skill_files(folder):
        if stat.st_size > MAX_SCRIPT_BYTES:
            continue
        try:
            text = (folder / relative).read_bytes().decode("utf-8", errors="ignore")
        except OSError:
            continue
        hits = HIDDEN_TEXT.findall(text)
        if hits:
            first = HIDDEN_TEXT.search(text)
            line = text.count("\n", 0, first.start()) + 1 if first else None
            found.append(SecurityFinding(
                severity="medium", rule=HIDDEN_RULE, category="obfuscation", file=relative,
                line=line, title=f"{len(hits)} hidden characters (Unicode tags or bidi "
                                 "controls) a person cannot see; served without them"))
    return found


def _with_own_checks(result: ScanResult, folder: Path) -> ScanResult:
    """`result` with skillbank's own findings (`hidden_text`) added, its status to match."""
    findings = [f for f in result.findings if f.rule != HIDDEN_RULE] + hidden_text(folder)
    findings.sort(key=lambda f: (SEVERITY_ORDER.index(f.severity), f.file or "", f.line or 0))
    status = "findings" if any(f.severity != "info" for f in findings) else "clean"
    return replace(result, findings=findings, status=status, checks=PRECHECK_VERSION)


def timed_out(version: str, timeout: float, started: float) -> ScanResult:
    """The result for a skill the scanner did not finish in `timeout` seconds: a critical
    finding, as for a script it cannot read.

    Stored as "scan failed", it counted as unscanned, which the third-party default only
    notes: a 1 MB script of 11,700 chained functions made the scan time out and the skill that
    held credential-stealing code was served. The skill's author chooses what takes long, so
    what could not be looked at in time holds a skill not the bank's own until a person reads
    it (an explicit scan tries again: a loaded machine can make a harmless skill time out)."""
    finding = SecurityFinding(severity="critical", rule=TIMEOUT_RULE, category="unscannable",
                              title=f"cannot be scanned: the scan did not finish in {timeout:g} "
                                    "s; read it before accepting")
    return ScanResult(version, "findings", [finding], seconds=time.time() - started,
                      scanner="skillbank", at=started)


#: How versions before UNSCANNABLE_SCRIPT stored a script the scanner could not read.
_OLD_REFUSAL = "scan failed: script "


class ScanStore:
    """Results on disk, one file per version digest (`<root>/skill-scans/<version>.json`)."""

    def __init__(self, root: Path) -> None:
        self.folder = root / SCANS_DIR
        self._memo: dict[str, ScanResult] = {}
        self._lock = threading.Lock()

    def get(self, version: str) -> ScanResult | None:
        with self._lock:
            if version in self._memo:
                return self._memo[version]
        path = self.folder / f"{version}.json"
        try:
            result = ScanResult.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: scan again
        if result.status.startswith(_OLD_REFUSAL):
            return None  # an unscannable script stored as a failure: now a finding, so redo it
        with self._lock:
            self._memo[version] = result
        return result

    def put(self, result: ScanResult) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.folder / f"{result.version}.json",
                     json.dumps(result.to_json(), ensure_ascii=False) + "\n")
        with self._lock:
            self._memo[result.version] = result


class _Worker:
    """One scanner process; restarted after a crash or a timeout."""

    def __init__(self, python: str) -> None:
        self.python = python
        self.proc: subprocess.Popen[str] | None = None
        self.version = ""
        self._lines: queue.Queue[str | None] = queue.Queue()

    def _read(self, proc: subprocess.Popen[str], lines: "queue.Queue[str | None]") -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def start(self) -> None:
        self.stop()
        self._lines = queue.Queue()
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        self.proc = subprocess.Popen(
            [self.python, "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=env, cwd="/",
            start_new_session=True)  # its own process group: stopping it stops its children
        threading.Thread(target=self._read, args=(self.proc, self._lines), daemon=True,
                         name="skillbank-scan-reader").start()
        hello = self._next(START_TIMEOUT)
        if not hello.get("ready"):
            self.stop()
            raise RuntimeError(hello.get("error") or "the scanner did not start")
        self.version = str(hello.get("version", ""))

    def _next(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            code = self.proc.wait(timeout=5) if self.proc else None
            raise ChildProcessError(f"the scanner exited (code {code})")
        try:
            return json.loads(line)
        except ValueError:
            return {"ok": False, "error": "the scanner wrote something that is not JSON"}

    def scan(self, folder: Path, timeout: float) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"path": str(folder)}) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            self.stop()
            raise ChildProcessError(f"the scanner exited ({exc})") from None
        try:
            return self._next(timeout)
        except (TimeoutError, ChildProcessError):
            self.stop()
            raise

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the worker and anything it started
        except (ProcessLookupError, PermissionError):
            if proc.poll() is None:
                proc.kill()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:  # stdout is left to the reader thread: closing it under a blocked read would wait
            if proc.stdin:
                proc.stdin.close()
        except OSError:
            pass


class Scanner:
    """Scans skills in one background thread, each version once; results in a ScanStore."""

    def __init__(self, root: Path, *, python: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.store = ScanStore(root)
        self.python = python
        self.timeout = timeout
        self.digests = pins.DigestCache()
        self._queue: dict[str, tuple[Path, bool]] = {}  # version -> (folder, whole), oldest first
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = False
        self._worker: _Worker | None = None
        self._stopped = False
        self._scan_lock = threading.Lock()  # one worker process, one scan at a time
        self.broken = ""  # why the scanner cannot run at all (then nothing is queued)

    @property
    def available(self) -> bool:
        return bool(self.python) and not self.broken

    def result(self, folder: Path, version: str) -> ScanResult | None:
        """The stored result for this version of the skill in `folder`, with an earlier
        precheck's verdict checked again (once: the result is stored with this one's).

        Results are kept per version for good, so a padded suffix-less script an earlier
        precheck let through kept its cached "medium finding" and stayed served."""
        found = self.store.get(version)
        if found is None or found.failed or found.checks >= PRECHECK_VERSION:
            return found
        refused = precheck(folder)
        found = (unscannable(version, *refused, at=time.time()) if refused
                 else _with_own_checks(found, folder))
        self.store.put(found)
        return found

    def submit(self, folder: Path, version: str, whole: bool = False) -> None:
        """Scan this version of a skill in the background (a no-op when already known).

        `whole`: the version covers every file of the folder (`pins.OUTSIDE`), as for a skill
        not the bank's own."""
        if not self.available or self.store.get(version) is not None:
            return
        with self._cv:
            if version in self._queue or self._stopped:
                return
            self._queue[version] = (folder, whole)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="skillbank-scan")
                self._thread.start()
            self._cv.notify_all()

    @property
    def pending(self) -> int:
        with self._cv:
            return len(self._queue) + (1 if self._busy else 0)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every submitted scan is done; False if `timeout` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while self._queue or self._busy:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(timeout=left if left is not None else 1.0)
        return True

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._queue or self._stopped:
                    self._busy = False
                    self._cv.notify_all()
                    self._thread = None
                    break
                version = next(iter(self._queue))
                folder, whole = self._queue.pop(version)
                self._busy = True
            try:
                self.keep(self.scan_now(folder, version, whole))
            except Exception:  # noqa: BLE001 - never let one skill stop the queue
                log.exception("scanning %s failed", folder)
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()
        with self._scan_lock:  # idle: let the worker go (a foreground scan may hold it)
            if self._worker is not None and self._thread is None:
                self._worker.stop()
                self._worker = None

    def keep(self, result: ScanResult) -> None:
        """Store `result`, unless the bank was closed under the scan.

        `close()` kills the worker mid-scan; the "scan failed" that follows says nothing about
        the skill. Stored, it was final for that version: a third-party skill changed upstream,
        then opened by any short CLI command, was never scanned again and was served."""
        if self._stopped:  # set before close() kills the worker, so a cut-short scan sees it
            return
        self.store.put(result)

    def scan_now(self, folder: Path, version: str, whole: bool = False) -> ScanResult:
        """Scan one folder in this thread (the worker process is shared and reused)."""
        with self._scan_lock:
            return self._scan_locked(folder, version, whole)

    def _scan_locked(self, folder: Path, version: str, whole: bool) -> ScanResult:
        started = time.time()
        refused = precheck(folder)
        if refused:
            return unscannable(version, *refused, at=started)
        if self._worker is None:
            self._worker = _Worker(str(self.python))
        try:
            reply = self._worker.scan(folder, self.timeout)
        except TimeoutError:
            return timed_out(version, self.timeout, started)
        except ChildProcessError as exc:
            return ScanResult(version, f"scan failed: {exc}", at=started)
        except (RuntimeError, OSError) as exc:
            self.broken = f"the scanner cannot start: {exc}"
            with self._cv:
                self._queue.clear()
            return ScanResult(version, f"scan failed: {self.broken}", at=started)
        scanner = f"cisco-ai-skill-scanner {self._worker.version}".strip()
        after = pins.version_of(self.digests.digests(folder, whole))
        if after != version:
            return ScanResult(version, "scan failed: the skill changed while it was scanned",
                              at=started, scanner=scanner)
        if not reply.get("ok"):
            return ScanResult(version, f"scan failed: {reply.get('error', 'unknown error')}",
                              seconds=float(reply.get("seconds", 0.0)), at=started,
                              scanner=scanner)
        findings = []
        for raw in reply.get("findings", []):
            try:
                findings.append(SecurityFinding(**{**raw, "file": _relative(raw.get("file"),
                                                                          folder)}))
            except (TypeError, ValueError):
                continue
        return _with_own_checks(ScanResult(version, "clean", findings,
                                           float(reply.get("seconds", 0.0)), scanner, started),
                                folder)

    def close(self) -> None:
        with self._cv:
            self._stopped = True
            self._queue.clear()
            self._cv.notify_all()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=2)
        if self._worker is not None:
            self._worker.stop()


def _relative(path: Any, folder: Path) -> str | None:
    if not path:
        return None
    text = str(path)
    prefix = str(folder).rstrip("/") + "/"
    return text[len(prefix):] if text.startswith(prefix) else text


def _scanned(skill: Any) -> bool:
    """Whether a Skill record has a scan result ("clean" or "findings"), as opposed to "not
    scanned" (no scanner) or "scan failed: <why>"."""
    return getattr(skill, "scan", "") in ("clean", "findings")


def nothing_scanned(skills: list[Any], status: dict[str, Any]) -> str | None:
    """Why none of `skills` could be scanned, or None when one was (or there were none).

    An empty SARIF log reads as "no findings" to a CI gate; when nothing was looked at, the
    caller must say so (`skills scan` exits 1, and its SARIF invocation is unsuccessful)."""
    if not skills or any(_scanned(s) for s in skills):
        return None
    if status.get("broken"):
        return f"no skill was scanned: {status['broken']}"
    if not status.get("available"):
        return f"no skill was scanned: no scanner; {INSTALL_HINT}"
    reasons = "; ".join(f"{s.name}: {s.scan}" for s in skills[:3])
    more = f" and {len(skills) - 3} more" if len(skills) > 3 else ""
    return f"no skill was scanned: every scan failed ({reasons}{more})"


def _invocation(skills: list[Any], failure: str | None) -> dict[str, Any]:
    """SARIF's record of the run itself: unsuccessful when nothing could be scanned, with a
    notification per skill left unscanned (so a partial failure is visible too)."""
    notes: list[dict[str, Any]] = [{"level": "error", "message": {"text": failure}}] \
        if failure else []
    notes.extend({"level": "warning", "message": {"text": f"{s.name}: {s.scan}"},
                  "properties": {"skill": s.name}} for s in skills if not _scanned(s))
    return {"executionSuccessful": failure is None, "toolExecutionNotifications": notes}


def sarif(skills: list[Any], failure: str | None = None) -> dict[str, Any]:
    """SARIF 2.1.0 for Skill records with findings: one run, one result per finding, and one
    invocation saying whether the scan could run (`failure`: why nothing was scanned)."""
    levels = {"critical": "error", "high": "error", "medium": "warning", "low": "note",
              "info": "note"}
    rules: dict[str, dict[str, Any]] = {}
    out: list[dict[str, Any]] = []
    for skill in skills:
        folder = Path(skill.path).parent
        for f in skill.findings:
            rules.setdefault(f.rule, {"id": f.rule, "shortDescription": {"text": f.title or f.rule},
                                      "properties": {"category": f.category}})
            location: dict[str, Any] = {"artifactLocation": {
                "uri": (folder / (f.file or "SKILL.md")).as_uri()}}
            if f.line:
                location["region"] = {"startLine": f.line}
            out.append({"ruleId": f.rule, "level": levels[f.severity],
                        "message": {"text": f"{skill.name}: {f.title or f.rule}"},
                        "locations": [{"physicalLocation": location}],
                        "properties": {"severity": f.severity, "skill": skill.name,
                                       "trust": skill.trust, "held": skill.held}})
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "skillbank (cisco-ai-skill-scanner)",
                                          "informationUri": "https://github.com/cisco-ai-defense/skill-scanner",
                                          "rules": list(rules.values())}},
                      "invocations": [_invocation(skills, failure)],
                      "results": out}]}
