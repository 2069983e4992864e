"""CLI options and arguments that cannot be honoured are refused with a one-line error that
names the problem (exit 2 for usage errors), never silently ignored or left to a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files

from vaultmem.cli import main

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path | None = None, input: str | None = None) -> tuple[int, str, str]:
    argv = list(args)
    if vault is not None:
        argv += ["--vault", str(vault)]
    result = CliRunner().invoke(main, argv, input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    code, _out, err = run("init", str(tmp_path / "v"))
    assert code == 0, err
    return tmp_path / "v"


# --- 1. float options refuse NaN and infinity ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("mcp", "--lock-wait"), "--lock-wait"),
        (("watch", "--debounce"), "--debounce"),
        (("remember", "x", "--importance"), "--importance"),
        (("remember", "x", "--confidence"), "--confidence"),
    ],
)
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
def test_float_options_refuse_nan_and_infinity(
    vault: Path, args: tuple[str, ...], option: str, value: str
) -> None:
    before = snapshot_files(vault)
    code, out, err = run(*args, value, vault=vault)
    assert code == 2, (out, err)
    assert f"Invalid value for '{option}': '{value}' is not a finite number" in err
    assert "Traceback" not in err
    assert snapshot_files(vault) == before


def test_unbounded_float_options_show_no_empty_range_in_help() -> None:
    code, out, _err = run("remember", "--help")
    assert code == 0
    assert "None" not in out


# --- 2. --vault: a folder inside a vault, an empty value --------------------------------------


def test_vault_option_inside_a_vault_names_the_enclosing_vault(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault.parent)
    code, out, err = run("status", "--vault", "v/LTM")
    assert code == 1
    assert err == "Error: v/LTM lies inside the vault v: pass --vault v\n"
    assert "init" not in err
    code, _out, err = run("status", "--vault", str(vault / "STM"))
    assert err == f"Error: {vault / 'STM'} lies inside the vault {vault}: pass --vault {vault}\n"
    assert not (vault / "LTM" / "vaultmem.toml").exists()


def test_vault_option_outside_any_vault_still_says_init(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    code, _out, err = run("status", "--vault", str(tmp_path / "plain"))
    assert code == 1
    assert f"run `vaultmem init {tmp_path / 'plain'}` first" in err


def test_empty_vault_option_is_refused(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(vault)
    code, out, err = run("status", "--vault", "")
    assert code == 2
    assert "'' is empty: give the vault folder, or leave --vault out" in err
    assert out == ""


def test_empty_vaultmem_vault_variable_means_not_set(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault / "LTM")
    monkeypatch.setenv("VAULTMEM_VAULT", "")
    code, out, err = run("status")
    assert code == 0, err
    assert str(vault) in out


# --- 3. merge-driver: bad input is a one-line error, an option never a file -------------------


def _merge_driver(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``vaultmem merge-driver ARGS`` as git runs it (a new process through the launcher)."""
    return subprocess.run(
        [sys.executable, "-m", "vaultmem", "merge-driver", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )


@pytest.fixture
def sides(tmp_path: Path) -> Path:
    for name in ("base.md", "ours.md", "theirs.md"):
        (tmp_path / name).write_text("a line\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nonexist.md", "ours.md", "theirs.md"), "'BASE': File 'nonexist.md' does not exist"),
        (("base.md", "folder", "theirs.md"), "'OURS': File 'folder' is a directory"),
        (("base.md", "ours.md", "gone.md", "STM/x.md"), "'THEIRS': File 'gone.md' does not"),
        (("--json", "base.md", "ours.md", "theirs.md"), "No such option '--json'"),
        (("base.md", "ours.md", "theirs.md", "--bogus"), "No such option '--bogus'"),
    ],
)
def test_merge_driver_refuses_bad_input_in_one_line(
    sides: Path, args: tuple[str, ...], message: str
) -> None:
    done = _merge_driver(sides, *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert (sides / "ours.md").read_text(encoding="utf-8") == "a line\n"
    assert not (sides / "--json").exists()


def test_merge_driver_still_merges_as_git_calls_it(sides: Path) -> None:
    (sides / "theirs.md").write_text("a line\nfrom theirs\n", encoding="utf-8")
    done = _merge_driver(sides, "base.md", "ours.md", "theirs.md", "STM/x.md")
    assert done.returncode == 0, done.stderr
    assert (sides / "ours.md").read_text(encoding="utf-8") == "a line\nfrom theirs\n"


def test_merge_driver_reports_an_unreadable_file_in_one_line(
    sides: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from vaultmem import launcher
    from vaultmem.services.sync import merge_driver

    def refused(*_args: object) -> object:
        raise PermissionError(13, "Permission denied", "ours.md")

    monkeypatch.setattr(merge_driver, "merge_files", refused)
    monkeypatch.chdir(sides)
    code = launcher.merge_driver_main(["base.md", "ours.md", "theirs.md", "STM/x.md"])
    assert code == 2
    assert capsys.readouterr().err == "vaultmem merge-driver: ours.md: Permission denied\n"


# --- 4. doctor --json: "ok" honours --strict; a failure carries "error" and "exit_code" -------


def test_doctor_strict_json_with_a_warning_is_not_ok(vault: Path) -> None:
    (vault / "Plain.md").write_text("Points at [[Nowhere]].\n", encoding="utf-8")
    code, out, _err = run("doctor", "--json", vault=vault)
    assert code == 0
    data = json.loads(out)
    assert data["ok"] is True and "error" not in data and len(data["warnings"]) == 1
    code, out, _err = run("doctor", "--strict", "--json", vault=vault)
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False
    assert data["error"] == "1 warning (--strict) needs attention"
    assert data["exit_code"] == 1


def test_doctor_json_with_a_problem_carries_the_error(vault: Path) -> None:
    (vault / "Bad.md").write_text("---\nkey: [unclosed\n---\nBody\n", encoding="utf-8")
    code, out, _err = run("doctor", "--json", vault=vault)
    assert code == 1
    data = json.loads(out)
    assert data["ok"] is False
    assert data["error"] == "1 problem needs attention"
    assert data["exit_code"] == 1
    code, out, _err = run("doctor", "--json", "--fix", vault=vault)
    assert code == 1
    data = json.loads(out)
    assert (data["ok"], data["exit_code"]) == (False, 1) and "fix" in data


# --- 5. show names why a note is not read as a memory: its YAML error, or a template ----------

BAD_YAML = "---\ntype: memory\nid: x1\nkey: [unclosed\n---\nBody\n"


def test_show_of_a_memory_whose_yaml_does_not_parse_names_the_yaml_error(vault: Path) -> None:
    (vault / "STM" / "bad.md").write_text(BAD_YAML, encoding="utf-8")
    code, out, err = run("show", "STM/bad.md", vault=vault)
    assert code == 0, err
    assert "STM/bad.md: frontmatter is not valid YAML: did not find expected ',' or ']'" in out
    assert "no `type: memory`" not in out
    code, out, _err = run("show", "STM/bad.md", "--json", vault=vault)
    data = json.loads(out)
    assert data["memory"] is False and "template" not in data
    assert data["problems"][0].startswith("frontmatter is not valid YAML: ")


def test_show_of_a_template_says_it_is_a_template(vault: Path) -> None:
    code, out, err = run("show", "Templates/Memory.md", vault=vault)
    assert code == 0
    assert "Templates/Memory.md is a template (it lies in a template folder)" in out
    assert "use_count" not in out
    assert err == ""  # its {{date}} placeholders are not reported as bad values
    code, out, _err = run("show", "Templates/Memory.md", "--json", vault=vault)
    data = json.loads(out)
    assert (data["memory"], data["template"]) == (False, True)
    assert "score" not in data


def test_mcp_show_text_names_the_yaml_error(vault: Path) -> None:
    from vaultmem import Vault
    from vaultmem.mcp.rendering import memory_text

    (vault / "STM" / "bad.md").write_text(BAD_YAML, encoding="utf-8")
    with Vault.open(vault) as opened:
        text = memory_text(opened.memory("STM/bad.md").as_dict())
    assert "not read as a memory: STM/bad.md: frontmatter is not valid YAML" in text
    assert "a note of your own" not in text


# --- 6. VAULTMEM_EMBEDDINGS=off is named as the reason embeddings are unavailable -------------


@pytest.mark.parametrize("args", [("embed", "--all"), ("consolidate",), ("embed", "--status")])
def test_embeddings_switched_off_by_the_variable_name_it(
    vault: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    monkeypatch.setenv("VAULTMEM_EMBEDDINGS", "off")
    _code, out, err = run(*args, vault=vault)
    assert "embeddings are switched off by VAULTMEM_EMBEDDINGS=off" in out + err
    assert "no embedding provider is configured" not in out + err


def test_embeddings_with_provider_none_still_say_none_is_configured(vault: Path) -> None:
    toml = vault / "vaultmem.toml"
    toml.write_text(toml.read_text().replace('provider = "auto"', 'provider = "none"', 1))
    code, _out, err = run("embed", "--all", vault=vault)
    assert code == 1
    assert "no embedding provider is configured: install" in err


# --- 7. observe --context-tags: a blank or '#'-only tag is refused; the help is true ----------


@pytest.fixture
def memory(vault: Path) -> str:
    code, out, err = run(
        "remember", "Prefers dark themes", "--tags", "ui", "--json", "--now", NOW, vault=vault
    )
    assert code == 0, err
    return str(json.loads(out)["path"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("#", "tag '#' is empty"),
        ("   ", "'   ' is empty: give the context's tags"),
        ("", "'' is empty: give the context's tags"),
        ("work, #", "tag '#' is empty"),
    ],
)
def test_observe_refuses_unusable_context_tags(
    vault: Path, memory: str, value: str, message: str
) -> None:
    before = snapshot_files(vault)
    code, _out, err = run("observe", memory, "--context-tags", value, "--now", NOW, vault=vault)
    assert code == 2
    assert f"Invalid value for '--context-tags': {message}" in err
    assert snapshot_files(vault) == before


def test_observe_context_tags_make_a_cross_domain_use(vault: Path, memory: str) -> None:
    code, out, err = run(
        "observe", memory, "--context-tags", "#work,travel", "--json", "--now", NOW, vault=vault
    )
    assert code == 0, err
    assert json.loads(out)["memories"][0]["cross_domain_count"] == 1


def test_observe_help_says_an_untagged_memory_is_never_cross_domain() -> None:
    _code, out, _err = run("observe", "--help")
    assert "A memory without tags, or a use without --context-tags, is never" in " ".join(
        out.split()
    )


# --- 8. --now where it does nothing is refused ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (("doctor",), "--now is used only with --fix"),
        (("doctor", "--json"), "--now is used only with --fix"),
        (("embed", "--status"), "--now is used only with --all"),
        (("embed", "Prefers dark themes"), "--now is used only with --all"),
    ],
)
def test_now_that_would_be_ignored_is_refused(
    vault: Path, memory: str, args: tuple[str, ...], needs: str
) -> None:
    code, out, err = run(*args, "--now", NOW, vault=vault)
    assert code == 2
    assert needs in err + out


@pytest.mark.parametrize("args", [("doctor", "--fix"), ("doctor",), ("embed", "--status")])
def test_now_is_accepted_where_it_is_used_or_set_for_the_session(
    vault: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    if "--fix" in args:
        code, _out, err = run(*args, "--now", NOW, vault=vault)
    else:  # VAULTMEM_NOW is one setting for a whole simulated session: not refused
        monkeypatch.setenv("VAULTMEM_NOW", NOW)
        code, _out, err = run(*args, vault=vault)
    assert code == 0, err


# --- 9. touch --help says what a touch does ---------------------------------------------------


def test_touch_help_matches_what_a_touch_writes(vault: Path, memory: str) -> None:
    _code, out, _err = run("touch", "--help")
    text = " ".join(out.split())
    assert "a --now before the memory's last_used counts the use but keeps last_used" in text
    assert "also adds 1 to use_days (three lines)" in text
    before = (vault / memory).read_text(encoding="utf-8")
    code, _out, err = run("touch", memory, "--now", "2026-11-19T09:00:00", vault=vault)
    assert code == 0, err
    after = (vault / memory).read_text(encoding="utf-8")
    assert "last_used: 2026-11-20T09:00:00" in after  # kept, as the help says
    assert "use_count: 2" in after
    code, _out, err = run("touch", memory, "--now", "2026-11-21T09:00:00", vault=vault)
    changed = set((vault / memory).read_text(encoding="utf-8").splitlines()) - set(
        after.splitlines()
    )
    assert {line.split(":")[0] for line in changed} == {"last_used", "use_count", "use_days"}
    assert before != after
