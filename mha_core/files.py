"""Files the app and its commands write land whole or not at all, and a failed write says why in words.

``atomic_write`` writes a temporary file in the target's folder, flushes and fsyncs it, then renames it over the
target (``os.replace``, atomic on POSIX and Windows): a full disk, a crash or a kill leaves either the old file or
the new one, never a truncated one, and never a stray temporary file. Its errors are ``WriteFailed`` (a LabError)
whose catalog text is the reason, for the caller's own sentence ("Cannot write the handout to {path}: {reason}").
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from mha_core.errors import LabError

__all__ = ["CHUNK", "WriteFailed", "atomic_write", "check_target", "write_failed"]

CHUNK = 1 << 20  # bytes per os.write call: a short or failed write is noticed within a megabyte
_TEMP_NAME_MAX = 120  # characters of the target's name kept in the temporary name (NAME_MAX is 255 bytes)


class WriteFailed(LabError):
    """A file could not be written; ``key`` names the reason (``errors.write_*``), its text fits after a colon."""


def _oserror(code: int, path: Path) -> OSError:
    return OSError(code, os.strerror(code), str(path))


def write_failed(err: OSError, path: Path | str) -> WriteFailed:
    """The reason an OSError gives for not writing ``path``, as a translatable error (the folder that does not
    exist, a folder where the file should be, no permission, a full disk, a read-only disk, or the system's text)."""
    path = Path(path)
    folder = str(path.parent) if str(path.parent) else "."
    code = err.errno
    if code == errno.ENOENT:  # each error passes exactly the placeholders its text uses (tests/test_errors.py)
        return WriteFailed("write_no_folder", folder=folder)
    if code == errno.ENOTDIR:
        return WriteFailed("write_not_folder", folder=folder)
    if code == errno.EISDIR:
        return WriteFailed("write_is_folder", path=str(path))
    if code in (errno.EACCES, errno.EPERM):
        return WriteFailed("write_denied", path=str(path), folder=folder)
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return WriteFailed("write_disk_full")
    if code == errno.EROFS:
        return WriteFailed("write_read_only", folder=folder)
    if code == errno.EFBIG:
        return WriteFailed("write_too_large")
    return WriteFailed("write_other", reason=err.strerror or type(err).__name__)


def check_target(path: Path | str) -> None:
    """Fail early (WriteFailed) if ``path`` cannot be a file: its folder is missing or not a folder, or it is one;
    a command calls this before seconds of work whose result it could not save."""
    path = Path(path)
    folder = path.parent
    if not folder.exists():
        raise write_failed(_oserror(errno.ENOENT, path), path)
    if not folder.is_dir():
        raise write_failed(_oserror(errno.ENOTDIR, path), path)
    if path.is_dir():
        raise write_failed(_oserror(errno.EISDIR, path), path)


def _write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd``, in chunks, going on after a short write (os.write may write fewer)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:CHUNK])
        if written <= 0:
            raise _oserror(errno.EIO, Path(f"<fd {fd}>"))
        view = view[written:]


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: some systems cannot open or fsync a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path | str, data: bytes) -> None:
    """Replace ``path`` by a file holding exactly ``data``, or raise WriteFailed and leave ``path`` as it was.

    A symbolic link is written through (its target is replaced); an existing file keeps its permission bits and
    is not replaced if it is read-only, as a plain write would refuse it.
    """
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        check_target(target)
        existing = target.stat() if target.exists() else None
        if existing is not None and not os.access(target, os.W_OK):
            raise _oserror(errno.EACCES, path)
        tmp = target.with_name(f".{target.name[:_TEMP_NAME_MAX]}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            try:
                if existing is not None and os.chmod in os.supports_fd:
                    os.chmod(fd, stat.S_IMODE(existing.st_mode))
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as err:
        raise write_failed(err, path) from err
    _sync_folder(target.parent)
