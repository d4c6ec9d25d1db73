"""The dedicated memory tools (namespace `memories`): `add_ad_hoc_note`, `list`, `read` and
`search`, each confined to the memory root (TOOL-GEN, TOOL-PATH, TOOL-LIST, TOOL-READ,
TOOL-SEARCH, TOOL-NOTE)."""
