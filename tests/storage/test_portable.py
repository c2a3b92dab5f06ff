"""The calls that differ between POSIX and Windows (storage/portable.py): the lock
(flock, else filelock's), the seek-and-read that stands in for ``os.pread`` where there is
none, setting a mode without ``fchmod``, and a package that imports with no POSIX-only
module. The lock's behaviour across real processes is test_concurrency.py's; these
run the same functions store.py calls, on one machine's descriptors."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers_write import new_session, try_lock
from locations import copy_fixture

import jsonl_session
from jsonl_session import Session
from jsonl_session.storage import portable, store

PACKAGE = Path(jsonl_session.__file__).resolve().parent
POSIX_ONLY = {"fcntl", "termios", "tty", "pty", "pwd", "grp", "resource", "posix", "msvcrt"}


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def python_output(code: str, *args: Path) -> str:
    """What a fresh Python running ``code`` prints (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def two_descriptors(path: Path) -> tuple[int, int]:
    """Two descriptors of a new empty file at ``path``, opened one after the other."""
    path.write_bytes(b"")
    return os.open(path, os.O_RDONLY), os.open(path, os.O_RDONLY)


# imported only inside a function, where it may be missing: a pool's pipes made wider
# (Linux alone), the lock (flock where fcntl imports, else filelock's)
GUARDED_IMPORTS = {"jsonl_session/processes.py: fcntl", "jsonl_session/storage/portable.py: fcntl"}


class TestNothingPosixOnly:
    def test_no_module_of_the_package_imports_a_platform_only_module(self) -> None:
        found = {
            f"{path.relative_to(PACKAGE.parent).as_posix()}: {name}"
            for path in PACKAGE.rglob("*.py")
            for name in imported_modules(path) & POSIX_ONLY
        }
        assert found == GUARDED_IMPORTS

    def test_the_linux_only_import_is_inside_a_linux_only_branch(self) -> None:
        source = (PACKAGE / "processes.py").read_text(encoding="utf-8")
        guard = source.index('if not sys.platform.startswith("linux"):\n        return')
        assert guard < source.index("import fcntl") and source.count("import fcntl") == 1

    def test_the_lock_imports_fcntl_behind_import_error(self) -> None:
        source = (PACKAGE / "storage" / "portable.py").read_text(encoding="utf-8")
        guarded = [
            node
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Try)
            and any(
                isinstance(i, ast.Import) and [a.name for a in i.names] == ["fcntl"]
                for i in node.body
            )
            and any(
                isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in node.handlers
            )
        ]
        assert len(guarded) == 1
        assert source.count("import fcntl") == 1

    def test_the_package_imports_and_reads_where_fcntl_cannot_be_imported(
        self, tmp_path: Path
    ) -> None:
        session = copy_fixture(tmp_path, "branching")
        code = (
            "import sys\n"
            "class Refuse:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'fcntl':\n"
            "            raise ModuleNotFoundError('no fcntl here', name=name)\n"
            "sys.meta_path.insert(0, Refuse())\n"
            "sys.modules.pop('fcntl', None)\n"
            "import jsonl_session\n"
            "from jsonl_session.storage import store, writer, portable\n"
            "from jsonl_session import Session\n"
            "print(len(Session.open(sys.argv[1]).build_context().messages))\n"
        )
        assert int(python_output(code, session)) > 0

    def test_without_fcntl_the_lock_is_filelocks(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import filelock

        taken: list[int] = []
        real = filelock.lock_descriptor

        def spy(fd: int, **options: Any) -> bool:
            taken.append(fd)
            return real(fd, **options)

        monkeypatch.setattr(filelock, "lock_descriptor", spy)
        monkeypatch.setattr(portable, "_flock", None)  # as where fcntl is missing
        session, _, _ = new_session(tmp_path)
        taken.clear()
        session.append_custom("t", {"n": 1})
        assert taken
        assert Session.open(session.path, cache=False).entries[-1].type == "custom"
        with store.locked(session.path, "never"):
            assert not try_lock(session.path)
        assert try_lock(session.path)

    def test_where_fcntl_imports_a_lock_does_not_import_filelock(self, tmp_path: Path) -> None:
        session = copy_fixture(tmp_path, "branching")
        code = (
            "import sys\n"
            "from jsonl_session import Session\n"
            "Session.open(sys.argv[1]).append_custom('t', {'n': 1})\n"
            "print('filelock' in sys.modules)\n"
        )
        assert python_output(code, session).strip() == "False"


class TestTheLock:
    def test_a_second_descriptor_waits_until_the_first_lets_go(self, tmp_path: Path) -> None:
        path = tmp_path / "f"
        path.write_bytes(b"x\n")
        first = os.open(path, os.O_RDWR)
        portable.lock_exclusive(first)
        second = os.open(path, os.O_RDWR)
        got = threading.Event()

        def wait_for_it() -> None:
            portable.lock_exclusive(second)
            got.set()

        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        try:
            assert not got.wait(0.1)
            assert not try_lock(path)
            portable.close_locked(first)
            assert got.wait(10)
        finally:
            waiter.join(10)
        assert not try_lock(path)
        portable.close_locked(second)
        assert try_lock(path)

    def test_try_lock_says_whether_it_took_the_lock(self, tmp_path: Path) -> None:
        first, second = two_descriptors(tmp_path / "f")
        try:
            assert portable.try_lock(first)
            assert not portable.try_lock(second)
        finally:
            portable.close_locked(first)
            os.close(second)

    def test_it_and_filelocks_lock_exclude_each_other(self, tmp_path: Path) -> None:
        from filelock import lock_descriptor, unlock_descriptor

        path = tmp_path / "f"
        ours, theirs = two_descriptors(path)
        try:
            assert portable.try_lock(ours)
            assert not lock_descriptor(theirs, blocking=False)
            portable.close_locked(ours)
            ours = os.open(path, os.O_RDONLY)
            assert lock_descriptor(theirs, blocking=False)
            assert not portable.try_lock(ours)
            unlock_descriptor(theirs)
            assert portable.try_lock(ours)
        finally:
            portable.close_locked(ours)
            os.close(theirs)

    def test_store_holds_it_while_locked_and_gives_it_back(self, tmp_path: Path) -> None:
        session, _, _ = new_session(tmp_path)
        with store.locked(session.path, "never"):
            assert not try_lock(session.path)
        assert try_lock(session.path)


class TestWithoutPread:
    def test_seek_read_reads_what_pread_reads(self, tmp_path: Path) -> None:
        path = tmp_path / "f"
        data = bytes(range(256)) * 40
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            for offset, length in [(0, 1), (0, len(data)), (17, 300), (len(data) - 3, 10)]:
                expected = os.pread(fd, length, offset)
                assert portable.seek_read(fd, length, offset) == expected
            assert portable.seek_read(fd, 5, len(data) + 10) == b""
        finally:
            os.close(fd)

    def test_sessions_read_and_append_through_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(portable, "_pread", None)
        session, _, assistant_id = new_session(tmp_path)
        for n in range(3):
            session.append_custom("t", {"n": n})
        reopened = Session.open(session.path, cache=False)
        assert [e.id for e in reopened.entries] == [e.id for e in session.entries]
        assert reopened.get(assistant_id) is not None
        assert session.path.read_bytes().count(b"\n") == len(session.entries) + 1


class TestWithoutFchmod:
    def test_a_new_file_gets_its_mode_by_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delattr(os, "fchmod")
        target = tmp_path / "new.jsonl"
        store.write_new_file(target, b"{}\n", "never")
        assert target.read_bytes() == b"{}\n"
        assert target.stat().st_mode & 0o777 == store.FILE_MODE
