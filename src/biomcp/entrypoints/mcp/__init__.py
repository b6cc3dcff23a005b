"""The MCP server: `server` (build_server, BioMcpServer) registers the tool families of
`tools` (each a `ToolSpec` list, `toolspec`) after the argument checks of `arguments`; spec
01's contract and its versions are `contract`; `guide`, `resources` and `prompts` are the words,
resources and prompts of the exposed tools; `policy` says which tools need which scope; `sdk`
names the SDK internals relied on; `prelude` answers the stdio handshake early."""
