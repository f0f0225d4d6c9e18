"""Build settings: project file, --config file, flags; later wins; bad values are one-line errors."""

import pytest

from postmortem.config import load_settings
from postmortem.errors import InputError


def test_defaults(tmp_path):
    s = load_settings(cwd=tmp_path)
    assert s.out == "out" and s.formats == ("html", "pdf", "json", "md") and s.lang == "en"


def test_precedence_project_then_file_then_flags(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.postmortem]\ndevice = "910B2"\nout = "reports"\nseq-length = 2048\n')
    extra = tmp_path / "ci.toml"
    extra.write_text('seq_length = 4096\nformat = "json,md"\n')
    s = load_settings(str(extra), {"lang": "zh", "out": None}, cwd=tmp_path)
    assert (s.device, s.out, s.seq_length, s.formats, s.lang) == ("910B2", "reports", 4096, ("json", "md"), "zh")


def test_postmortem_toml_beats_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.postmortem]\nout = "a"\n')
    (tmp_path / "postmortem.toml").write_text('out = "b"\n')
    assert load_settings(cwd=tmp_path).out == "b"


@pytest.mark.parametrize(
    "content, slug",
    [
        ("nonsense = 1\n", "config-unknown-key"),
        ("seq_length = 'long'\n", "config-invalid"),
        ("this is not toml", "config-invalid"),
    ],
)
def test_bad_config_files(tmp_path, content, slug):
    f = tmp_path / "bad.toml"
    f.write_text(content)
    with pytest.raises(InputError) as exc:
        load_settings(str(f), cwd=tmp_path)
    assert exc.value.slug == slug
    assert str(f) in exc.value.one_line()


def test_bad_flags(tmp_path):
    with pytest.raises(InputError):
        load_settings(flags={"lang": "fr"}, cwd=tmp_path)
    with pytest.raises(InputError):
        load_settings(flags={"formats": "html,docx"}, cwd=tmp_path)
    with pytest.raises(InputError):
        load_settings(flags={"device": "H100", "peak_tflops": 900.0}, cwd=tmp_path)
    with pytest.raises(InputError) as exc:
        load_settings(str(tmp_path / "missing.toml"), cwd=tmp_path)
    assert exc.value.slug == "config-missing"


def test_default_language_from_the_project_file(tmp_path):
    """A team writes `lang = "zh"` once; flags still win."""
    (tmp_path / "postmortem.toml").write_text('lang = "zh"\n')
    assert load_settings(cwd=tmp_path).lang == "zh"
    assert load_settings(flags={"lang": "en"}, cwd=tmp_path).lang == "en"
    (tmp_path / "postmortem.toml").write_text('lang = "fr"\n')
    with pytest.raises(InputError) as exc:
        load_settings(cwd=tmp_path)
    assert exc.value.slug == "bad-option"
