"""`flake8-detach lsp`: a language server for editors (needs the `lsp` extra: pygls)."""
