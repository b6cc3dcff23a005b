"""The MCP server: `server` (build_server, BioMcpServer), the tool families (`corpus_tools`,
`live_tools`) with their schemas (`schemas`, `live_schemas`) and `tools` (ToolSpec),
`resources`, and `policy` (which tools need which scope)."""
