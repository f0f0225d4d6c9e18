"""triage templates."""

TEMPLATES: dict[str, tuple[str, str]] = {
}
