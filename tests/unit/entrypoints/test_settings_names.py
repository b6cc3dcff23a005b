"""Variables meant for bio-mcp that are no setting: named, with the closest setting."""

from __future__ import annotations

from biomcp.entrypoints.settings import Settings, unknown_variables


def test_a_misspelt_setting_is_named_with_the_closest_one() -> None:
    warnings = unknown_variables(["BIOMCP_EMBEDDER", "ncbi_apikey", "PATH"])

    assert warnings == [
        "BIOMCP_EMBEDDER is not a bio-mcp setting and is ignored; did you mean BIOMCP_EMBEDDINGS?",
        "NCBI_APIKEY is not a bio-mcp setting and is ignored; did you mean NCBI_API_KEY?",
    ]


def test_every_setting_and_the_tools_own_variables_pass_silently() -> None:
    settings = [name.upper() for name in Settings.model_fields]
    tools = [
        "BIOMCP_TEST_POSTGRES_URL",
        "BIOMCP_SHARED_DATA",
        "BIOMCP_BENCH_PROFILE",
        "BIOMCP_FAKE_PMC_JATS",
        "BIOMCP_PG_PORT",
        "BIOMCP_WEAVIATE_PORT",
    ]

    assert unknown_variables([*settings, *(s.lower() for s in settings), *tools]) == []


def test_under_our_prefix_any_unknown_name_counts_elsewhere_only_a_likely_typo() -> None:
    # MCP_ and NCBI_ are shared with other software: a name far from ours is theirs.
    others = ["MCP_STORAGE_DIR", "NCBI_EMAIL_FOR_BIOPYTHON", "WEAVIATE_HOST", "OPENAI_API_KEY"]
    assert unknown_variables(others) == []

    [warning] = unknown_variables(["BIOMCP_SOMETHING_ELSE"])
    assert warning == "BIOMCP_SOMETHING_ELSE is not a bio-mcp setting and is ignored"
    assert unknown_variables(["MCP_LOG_LEVL"]) == [
        "MCP_LOG_LEVL is not a bio-mcp setting and is ignored; did you mean MCP_LOG_LEVEL?"
    ]
