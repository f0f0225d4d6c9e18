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
    assert (s.analysis.device, s.out, s.analysis.seq_length, s.formats, s.lang) == ("910B2", "reports", 4096, ("json", "md"), "zh")


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


def test_keys_are_the_fields_of_the_settings_and_of_the_analysis_options(tmp_path):
    """Every field of BuildSettings and AnalysisOptions is a key (with - or _), typed as declared;
    the analysis' run id and experiment are the build's."""
    from dataclasses import fields

    from postmortem.config import AnalysisOptions, BuildSettings, flag_values

    (tmp_path / "postmortem.toml").write_text('spike-z = 4\nbootstrap_resamples = "200"\nrun_id = "r7"\nprecision = "fp16"\n')
    s = load_settings(cwd=tmp_path)
    assert (s.analysis.spike_z, s.analysis.bootstrap_resamples, s.analysis.precision) == (4.0, 200, "fp16")
    assert s.run_id == "r7" and s.analysis.run_id is None
    assert isinstance(s.analysis.spike_z, float)
    build = {f.name for f in fields(BuildSettings)} - {"analysis", "sources"}
    analysis = {f.name for f in fields(AnalysisOptions)}
    for key in build | analysis:
        assert flag_values({key: "1"}) == {key: "1"}, key
    # the CLI's parameters: a flag not given is None (False for a switch); --out is out_dir, not a setting of that name
    assert flag_values({"run_dir": "x", "config": None, "out_dir": "o", "devices": None, "fail_on_regression": False,
                        "device": "910B2"}) == {"out": "o", "device": "910B2"}
