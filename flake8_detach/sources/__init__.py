"""Everything that reads or writes the user's disk, and the rules that keep it safe.

- :mod:`.files`: which files a run looks at (excludes, .gitignore as git reads it) and how a
  source is read (regular files only, within a size bound, decoded as Python decodes).
- :mod:`.notebooks` and :mod:`.notebook_json`: a Jupyter notebook as one module of its code
  cells, and its JSON written back in its own layout.
- :mod:`.cache`: the results cache, which owns only its own folder.
- :mod:`.writing`: the one atomic replace every write goes through (fixed files, the cache's
  entries, `--output-file`).
"""
