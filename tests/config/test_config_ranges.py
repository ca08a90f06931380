"""Config values: the compaction block's required keys are
errors naming the field, every number has a documented range, and no message
speaks Python (``None``, ``True``, a repr) where a person wrote YAML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kimi_compact_tui.config import compaction_enablement
from tests.factories import conversation, write_session

ROOT = Path(__file__).resolve().parents[2]
PYTHON_WORDS = re.compile(r"\b(None|True|False)\b|Input should|dictionary|NoneType")


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_session(tmp_path, "openai-json", conversation(8))


def plan_with(cli_main, session: Path, tmp_path: Path, yaml_text: str):
    config = tmp_path / "c.yaml"
    config.write_text(yaml_text, encoding="utf-8")
    return cli_main("plan", session, "--config", config), config


def assert_config_error(result, config: Path, *needles: str) -> str:
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    line = result.stderr
    assert str(config) in line, line
    for needle in needles:
        assert needle in line, line
    assert not PYTHON_WORDS.search(line), line
    return line


@pytest.mark.parametrize(
    "block, field",
    [
        ("{enabled: true}", "compaction.type"),
        ("{type: kimi}", "compaction.enabled"),
        ("{enabled: true, type: null}", "compaction.type"),
        ("{enabled: null, type: kimi}", "compaction.enabled"),
    ],
)
def test_a_compaction_block_needs_enabled_and_type(cli_main, session, tmp_path, block, field):
    result, config = plan_with(cli_main, session, tmp_path, f"compaction: {block}\n")
    assert_config_error(result, config, field, "required")


def test_the_engine_reason_for_a_missing_type_is_words():
    """The spec facade takes a config mapping as it is (no file, no error): its
    reason for staying disabled says what is missing, in words."""
    enabled, reason = compaction_enablement({"compaction": {"enabled": True}})
    assert not enabled and "compaction.type" in reason
    assert not PYTHON_WORDS.search(reason), reason


HUGE = "99999999999999999999999"


@pytest.mark.parametrize(
    "yaml_text, field",
    [
        (f"compaction: {{enabled: true, type: kimi, max_preserved_messages: {HUGE}}}",
         "compaction.max_preserved_messages"),
        ("compaction: {enabled: true, type: kimi, max_preserved_messages: -5}",
         "compaction.max_preserved_messages"),
        (f"compaction: {{enabled: true, type: kimi, settings_overrides: {{max_tokens: {HUGE}}}}}",
         "compaction.settings_overrides.max_tokens"),
        ("compaction: {enabled: true, type: kimi, settings_overrides: {max_tokens: 0}}",
         "compaction.settings_overrides.max_tokens"),
        ("compaction: {enabled: true, type: kimi, settings_overrides: {temperature: 50}}",
         "compaction.settings_overrides.temperature"),
        ("provider: {kind: openai, connect_timeout: 1e12}", "provider.connect_timeout"),
        ("provider: {kind: openai, read_timeout: 99999999}", "provider.read_timeout"),
        ("provider: {kind: openai, read_timeout: 0}", "provider.read_timeout"),
        ("provider: {kind: openai, retry_cap: 86400}", "provider.retry_cap"),
        ("provider: {kind: openai, retry_base_delay: 3600}", "provider.retry_base_delay"),
        (f"provider: {{kind: openai, max_retries: {HUGE}}}", "provider.max_retries"),
        (f"provider: {{kind: ollama, num_ctx: {HUGE}}}", "provider.num_ctx"),
        ("provider: {kind: offline, chunk_delay: 86400}", "provider.chunk_delay"),
        (f"provider: {{kind: openai, extra_body: {{max_tokens: {HUGE}}}}}",
         "provider.extra_body.max_tokens"),
        ("provider: {kind: openai, extra_body: {top_p: 3}}", "provider.extra_body.top_p"),
    ],
)  # fmt: skip
def test_absurd_numbers_are_errors_naming_the_field_and_the_range(
    cli_main, session, tmp_path, yaml_text, field
):
    result, config = plan_with(cli_main, session, tmp_path, yaml_text + "\n")
    line = assert_config_error(result, config, field + ":")
    assert re.search(r"from [\d,.]+ to [\d,.]+|above [\d,.]+, at most [\d,.]+", line), line
    assert HUGE not in line  # the typo is not echoed back in full


@pytest.mark.parametrize(
    "yaml_text",
    [
        "compaction: {enabled: true, type: kimi, max_preserved_messages: 0}",
        "compaction: {enabled: true, type: kimi, max_preserved_messages: 1000000}",
        "compaction: {enabled: true, type: kimi, settings_overrides: {max_tokens: 32000,"
        " temperature: 0.3}}",
        "provider: {kind: openai, connect_timeout: 600, read_timeout: 3600, retry_cap: 0,"
        " max_retries: 10}",
        "provider: {kind: ollama, num_ctx: 256}",
        "provider: {kind: ollama, num_ctx: 2000000}",
    ],
)
def test_numbers_at_the_ends_of_their_ranges_are_accepted(cli_main, session, tmp_path, yaml_text):
    result, _config = plan_with(cli_main, session, tmp_path, yaml_text + "\n")
    assert result.code == 0, result.stderr


@pytest.mark.parametrize(
    "yaml_text, field, yaml_word",
    [
        ("provider: {kind: openai, connect_timeout: true}", "provider.connect_timeout", "true"),
        ("provider: {kind: moonshot, region: false}", "provider.region", "false"),
        ("provider: {kind: openai, max_retries: true}", "provider.max_retries", "true"),
        ("provider: {true: 1}", "provider", "true"),
        ("compaction: {enabled: true, type: kimi, max_preserved_messages: true}",
         "compaction.max_preserved_messages", "true"),
        ("compaction: {enabled: 1, type: kimi}", "compaction.enabled", "1"),
        ("compaction: {enabled: true, type: kimi, settings_overrides: null}",
         "compaction.settings_overrides", "mapping"),
        ("compaction_model: 5", "compaction_model", "text"),
        ("provider: [1]", "provider", "mapping"),
        ("[1, 2]", "mapping", "a list"),
        ("just words", "mapping", "text"),
    ],
)  # fmt: skip
def test_config_errors_speak_yaml_not_python(
    cli_main, session, tmp_path, yaml_text, field, yaml_word
):
    result, config = plan_with(cli_main, session, tmp_path, yaml_text + "\n")
    assert_config_error(result, config, field, yaml_word)


def test_the_readme_documents_every_range():
    """Each number's line in the config block of docs/configuration.md gives both
    ends of its range."""
    from kimi_compact_tui import limits

    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in (
        "max_preserved_messages", "connect_timeout", "read_timeout", "max_retries",
        "retry_cap", "retry_base_delay", "num_ctx", "chunk_delay",
    ):  # fmt: skip
        limit = getattr(limits, name.upper())
        line = next((x for x in readme.splitlines() if x.strip().startswith(f"{name}:")), "")
        ends = (limits._figure(limit.low), limits._figure(limit.high))
        assert all(end in line.split("#", 1)[-1] for end in ends), (name, ends, line)
    for name in limits.REQUEST_FIELDS:
        assert f"`{name}`" in readme, name
