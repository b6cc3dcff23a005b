"""The tool families, one module (or package) each: `corpus`, `live`, `mesh`, `lookups`,
`citations`, `fulltext`, `projects` and `search_fetch`.

A family holds its tools' schemas, descriptions and handlers side by side, and exposes
`specs(services) -> list[ToolSpec]`; `server` registers every family. Families never import
each other (an import-linter contract holds it): what they share lives below them, in
`contract` (spec 01's text, the portable building blocks) and `toolspec`.
"""
