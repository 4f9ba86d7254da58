"""Evidence about values: imports, abstract values and the interpreter that computes them.

Where each concern lives:

- :mod:`.values` (the lattice of abstract values), :mod:`.dtypes` and :mod:`.array_facts` (dtype,
  layout and stride facts), :mod:`.ranks` (0-dim tensors: a reduced loss, which indexing
  refuses), :mod:`.placement` (tensors on the CPU on every path, where `.cpu()` copies nothing, and
  what only runs without a GPU compute: a CPU tensor met a GPU one in `mm` or a layer), :mod:`.frames` (pandas frames and scikit-learn's scalers and splitter:
  the tabular path's dtypes), :mod:`.semantics` (library tables: what torch/NumPy calls do),
  :mod:`.numpy_sinks` (which NumPy functions convert a tensor: measured, scripts/check_numpy_sinks.py),
  :mod:`.tensor_methods` (torch.Tensor's methods: a name outside them is no tensor's),
  :mod:`.distributions` (torch.distributions: draws carry no grad, densities their parameters'),
  :mod:`.uses` (what a function's code says a name is by how it uses it: a tensor-only method, a
  size);
- :mod:`.interpreter` (the driver), :mod:`.statements`, :mod:`.expressions`, :mod:`.calls` (one
  walker per kind of node), :mod:`.guards` (what tests and contexts tell), :mod:`.freezing`
  (modules whose parameters were set ``requires_grad=False``; those with none, such as
  ``nn.ReLU()`` or a loss, are frozen from the start in :mod:`.calls`), :mod:`.aliases` (names sharing
  storage, DET105), :mod:`.versions` (tests of ``torch.__version__``: the branch a current torch runs);
- :mod:`.summaries`: a function's summary per calling context and the worklist that re-runs
  whatever read a summary that grew, to a fixed point;
- :mod:`.heap`: containers and objects named by the node that made them;
- :mod:`.project`: how a value gets from ``models.py`` to ``train.py``: the project's root, its
  imports (star re-exports included) and cached ``ast`` summaries of its other files, notebooks
  included as callers (:mod:`.import_paths`: the folders a file adds to ``sys.path``, where its
  imports are looked for too), and a project class's lineage (``Project.lineage``: its project
  bases in Python's method order, the one walk inherited methods and module classes read); :mod:`.callers`: who calls a project function, read lazily from the
  files that name it, and whether every call runs with grad off; :mod:`.exports`: what each file gives
  the files that import it (what its functions return, its classes' fields and buffers, which of
  its module classes hold no parameters) and what its calls
  pass to theirs, computed per question over the definitions :mod:`.demand` says can change the
  answer; :mod:`.witness`: the questions a file's analysis asked its project and their
  answers, which tell when a cached result still holds after an edit elsewhere;
- :mod:`.scopes` (environments, function and class records), :mod:`.facts` (the rules' only view).

The walk reads libcst nodes. On the flake8 path and for imported files they are built from the
`ast` tree (``flake8_detach/ast_bridge.py``, no libcst parse); the fronts that write code parse
with libcst (``flake8_detach/parsing.py``).
"""
