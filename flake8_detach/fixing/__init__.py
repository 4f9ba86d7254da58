"""The write path's logic: what a fix changes in source text, before anything touches a disk.

- :mod:`.rewrites`: the small libcst node rewrites the rules build their fixes from.
- :mod:`.no_grad_blocks`: `.data` writes merged under one `with torch.no_grad():`.
- :mod:`.passes`: the fixes of one module applied in passes until nothing is left to fix.
- :mod:`.fixer`: one file's text, notebook or path fixed (and written through
  :mod:`flake8_detach.sources.writing`, the only code that replaces a user's file).
"""
