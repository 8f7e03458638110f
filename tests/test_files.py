"""Every file the app's commands write lands whole or not at all (issue 28 item 3): a disk that fills up partway,
an fsync that fails, a missing folder leave no file (or the earlier good file, byte for byte), no temporary file,
and one translated line that says why, with a non-zero exit code and no traceback."""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mha_core import files
from mha_core.files import WriteFailed, atomic_write
from mha_core.i18n import LANGS, translate

ROOT = Path(__file__).resolve().parents[1]
GOOD = b"%PDF-1.4 the earlier, good file\n" * 1000
NEW = bytes(range(256)) * 2000  # 512 kB: written in several os.write calls when CHUNK is small


def _disk_fills_up(monkeypatch, after: int = 1) -> None:
    """os.write writes half of what it is asked ``after`` times (a short write), then fails with ENOSPC."""
    real, calls = os.write, []

    def write(fd: int, data) -> int:
        calls.append(len(data))
        if len(calls) > after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, bytes(data[: max(1, len(data) // 2)]))

    monkeypatch.setattr(files, "CHUNK", 64 * 1024)
    monkeypatch.setattr(os, "write", write)


def _fsync_fails(monkeypatch) -> None:
    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- the function -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fail", [_disk_fills_up, _fsync_fails])
def test_a_full_disk_keeps_the_good_file_and_leaves_no_temporary_file(tmp_path, monkeypatch, fail):
    target, fresh = tmp_path / "handout.pdf", tmp_path / "new.pdf"
    target.write_bytes(GOOD)
    fail(monkeypatch)
    for path in (target, fresh):
        with pytest.raises(WriteFailed) as err:
            atomic_write(path, NEW)
        assert err.value.key == "write_disk_full"
    monkeypatch.undo()
    assert target.read_bytes() == GOOD
    assert _only(tmp_path) == ["handout.pdf"]  # no new.pdf, no .tmp


def test_a_write_replaces_the_file_whole_and_keeps_its_mode(tmp_path):
    target = tmp_path / "x.xml"
    target.write_bytes(GOOD)
    target.chmod(0o640)
    atomic_write(target, NEW)
    assert target.read_bytes() == NEW and (target.stat().st_mode & 0o777) == 0o640
    assert _only(tmp_path) == ["x.xml"]


def test_a_symbolic_link_is_written_through(tmp_path):
    real = tmp_path / "real.pdf"
    real.write_bytes(GOOD)
    (tmp_path / "link.pdf").symlink_to(real)
    atomic_write(tmp_path / "link.pdf", NEW)
    assert (tmp_path / "link.pdf").is_symlink() and real.read_bytes() == NEW


@pytest.mark.parametrize("case,key", [
    ("nodir", "write_no_folder"), ("folder", "write_is_folder"), ("under_file", "write_not_folder"),
])
def test_each_reason_is_named(tmp_path, case, key):
    (tmp_path / "folder").mkdir()
    (tmp_path / "under_file").write_bytes(b"")
    path = {"nodir": tmp_path / "nodir" / "x.pdf", "folder": tmp_path / "folder",
            "under_file": tmp_path / "under_file" / "x.pdf"}[case]
    with pytest.raises(WriteFailed) as err:
        atomic_write(path, NEW)
    assert err.value.key == key
    assert _only(tmp_path) == ["folder", "under_file"] and not any((tmp_path / "folder").iterdir())


@pytest.mark.parametrize("code,key", [
    (errno.EACCES, "write_denied"), (errno.EPERM, "write_denied"), (errno.EROFS, "write_read_only"),
    (errno.ENOSPC, "write_disk_full"), (errno.EFBIG, "write_too_large"), (errno.EIO, "write_other"),
])
def test_an_os_error_becomes_a_translated_reason(tmp_path, monkeypatch, code, key):
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "open", refuse)  # the temporary file cannot be created
    with pytest.raises(WriteFailed) as err:
        atomic_write(tmp_path / "x.pdf", NEW)
    monkeypatch.undo()
    assert err.value.key == key and not any(tmp_path.iterdir())
    texts = {lang: translate(lang, f"errors.{key}", **err.value.params) for lang in LANGS}
    assert all("⟦" not in text for text in texts.values()) and len(set(texts.values())) == len(LANGS)


# --- the handout command ------------------------------------------------------------------------------------

def _handout(capsys, monkeypatch, *args: str) -> tuple[int, str]:
    """The handout CLI's main() in this process, typesetting replaced by fixed bytes (the writing is tested)."""
    import mha_core.handout.__main__ as cli

    monkeypatch.setattr(cli, "handout_pdf", lambda *a, **k: NEW)
    code = cli.main(list(args))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("fail", [_disk_fills_up, _fsync_fails])
def test_the_handout_on_a_full_disk_keeps_the_old_file(tmp_path, capsys, monkeypatch, lang, fail):
    out = tmp_path / "x.pdf"
    out.write_bytes(GOOD)
    fail(monkeypatch)
    code, err = _handout(capsys, monkeypatch, "--lang", lang, "-o", str(out))
    monkeypatch.undo()
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    reason = translate(lang, "errors.write_disk_full", path=str(out), folder=str(tmp_path))
    assert err.strip() == translate(lang, "errors.handout_write", path=str(out), reason=reason)
    assert out.read_bytes() == GOOD and _only(tmp_path) == ["x.pdf"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_handout_says_the_folder_does_not_exist(tmp_path, capsys, monkeypatch, lang):
    out = tmp_path / "nodir" / "x.pdf"
    code, err = _handout(capsys, monkeypatch, "--lang", lang, "-o", str(out))
    assert code == 2 and "?" not in err
    reason = translate(lang, "errors.write_no_folder", path=str(out), folder=str(tmp_path / "nodir"))
    assert err.strip() == translate(lang, "errors.handout_write", path=str(out), reason=reason)
    assert not any(tmp_path.iterdir())


def test_the_handout_says_the_output_is_a_folder(tmp_path, capsys, monkeypatch):
    code, err = _handout(capsys, monkeypatch, "--lang", "en", "-o", str(tmp_path))
    assert code == 2
    assert translate("en", "errors.write_is_folder", path=str(tmp_path), folder=str(tmp_path.parent)) in err


# --- the Moodle command -------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_the_moodle_export_on_a_full_disk_keeps_the_old_file(tmp_path, capsys, monkeypatch, lang):
    from mha_core.quiz.__main__ import main

    out = tmp_path / "quiz.xml"
    out.write_bytes(GOOD)
    _disk_fills_up(monkeypatch, after=0)
    code = main(["export", "--format", "moodle", "-o", str(out), "--lang", lang])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    reason = translate(lang, "errors.write_disk_full", path=str(out), folder=str(tmp_path))
    assert err == translate(lang, "errors.export_write", path=out, reason=reason) + "\n"
    assert out.read_bytes() == GOOD and _only(tmp_path) == ["quiz.xml"]


def test_the_moodle_export_says_the_folder_does_not_exist(tmp_path, capsys):
    from mha_core.quiz.__main__ import main

    out = tmp_path / "nodir" / "quiz.xml"
    assert main(["export", "--format", "moodle", "-o", str(out), "--lang", "zh"]) == 1
    reason = translate("zh", "errors.write_no_folder", path=str(out), folder=str(tmp_path / "nodir"))
    assert capsys.readouterr().err == translate("zh", "errors.export_write", path=out, reason=reason) + "\n"


def _file_size_limit(limit: int):
    """For a child process: writes beyond ``limit`` bytes fail (EFBIG) as on a disk that fills up partway."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_the_real_moodle_command_cut_off_partway_leaves_the_old_file(tmp_path):
    """A real process whose writes stop at 4 kB (the XML is larger): before the fix it left a truncated file."""
    out = tmp_path / "quiz.xml"
    out.write_bytes(b"<quiz/>\n")
    run = subprocess.run([sys.executable, "-m", "mha_core.quiz", "export", "--format", "moodle", "-o", str(out),
                          "--lang", "en"], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         preexec_fn=_file_size_limit(4096))
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    reason = translate("en", "errors.write_too_large", path=str(out), folder=str(tmp_path))
    assert run.stderr == translate("en", "errors.export_write", path=out, reason=reason) + "\n"
    assert out.read_bytes() == b"<quiz/>\n" and _only(tmp_path) == ["quiz.xml"]


# --- the toy model's command --------------------------------------------------------------------------------

def test_saving_toy_weights_on_a_full_disk_keeps_the_old_file(tmp_path, monkeypatch):
    from mha_core.toy import load_default, save_model

    out = tmp_path / "default.pt"
    out.write_bytes(GOOD)
    model = load_default()
    _disk_fills_up(monkeypatch)
    with pytest.raises(WriteFailed):
        save_model(model, out)
    monkeypatch.undo()
    assert out.read_bytes() == GOOD and _only(tmp_path) == ["default.pt"]


def test_the_experiment_command_on_a_full_disk_exits_1_and_keeps_the_old_file(tmp_path, capsys, monkeypatch):
    import mha_core.toy.__main__ as cli

    class Result:
        def to_json_dict(self) -> dict:
            return {"seconds": 1.0, "stats": {}, "runs": ["x" * 100] * 2000}

    monkeypatch.setattr(cli, "heads_vs_accuracy", lambda task: Result())
    monkeypatch.setattr(cli.torch, "set_num_threads", lambda n: None)  # main() sets 1 for its own process
    out = tmp_path / "heads.json"
    out.write_bytes(GOOD)
    _disk_fills_up(monkeypatch, after=0)
    code = cli.main(["experiment", "--out", str(out)])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "disk is full" in err
    assert out.read_bytes() == GOOD and _only(tmp_path) == ["heads.json"]
