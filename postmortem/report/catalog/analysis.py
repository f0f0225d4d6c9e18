"""analysis templates."""

TEMPLATES: dict[str, tuple[str, str]] = {
}
