"""pandas frames and scikit-learn's splitter and scalers: the dtype facts of the tabular path.

The most asked tabular crash is a feature matrix read with pandas, scaled with scikit-learn and
handed to a float32 model: `torch.from_numpy(StandardScaler().fit_transform(df.values))` is a
float64 tensor, and `nn.Linear` refuses it (DET109). The facts, each checked on pandas 3.1.1 and
scikit-learn 1.9.1 by ``scripts/check_dtype_facts.py``:

* pandas reads numbers as float64 or int64 and true/false as bool (`read_csv` and the other
  readers, no `dtype=`); a frame built from an array has the array's dtype;
* selecting rows or columns (`df[cols]`, `df.iloc[...]`, `df.drop(...)`, `df.head()`) keeps the
  columns' dtypes, and `.values`/`.to_numpy()` give an array of their common dtype;
* the statistics (`mean`, `std`, `median`, `quantile`, `corr`, ...) of int64, float64 or bool
  columns are float64 (of float32 columns `mean` keeps float32 and `corr` does not: no claim);
* scikit-learn's scalers and PCA return float32 for a float32 input and float64 for any other
  number (ints, float64, a frame of them); `train_test_split` returns each array's rows, of the
  array's type and dtype.

A frame is a value with :data:`~.values.Flag.FRAME` (and NOT_TENSOR); its dtype bits are a
may-set of its columns' dtypes (none: unknown). Only a set that is exactly one dtype is evidence
for a rule, so `.values` of a `read_csv` frame (float64, int64 or bool) flags nothing until a
statistic or a scaler makes it float64.
"""

from __future__ import annotations

from . import dtypes as dt
from .values import ARRAY_LAYOUT, DTYPES, EMPTY, Flag, Value, merge_all

FRAME = Flag.FRAME | Flag.NOT_TENSOR

# pandas readers (no `dtype=`): numbers come as float64 or int64, true/false as bool.
READERS = frozenset(
    "read_csv read_table read_fwf read_excel read_parquet read_feather read_json read_sql read_sql_query "
    "read_sql_table read_orc read_stata read_spss read_sas".split()
)
READ_DTYPES = dt.F64 | dt.INT | dt.BOOL
CONSTRUCTORS = frozenset({"pandas.DataFrame", "pandas.Series"})
# Methods that return rows or columns of the frame (each column keeps its dtype).
SELECTING_METHODS = frozenset(
    "drop dropna head tail sample copy sort_values sort_index query filter take nlargest nsmallest "
    "drop_duplicates".split()
)
# Attributes that index the frame, or are it transposed (a transposed frame of one dtype keeps it).
INDEXERS = frozenset({"iloc", "loc", "T"})
# Attributes that are not columns (a column read as an attribute is `df.price`).
NOT_COLUMNS = frozenset(
    "shape columns index dtypes size ndim empty axes name attrs flags at iat plot str dt cat style".split()
)
# Statistics whose result is float64 for int64, float64 and bool columns.
FLOAT_STATISTICS = frozenset("mean std var median sem quantile corr cov skew kurt".split())
# The widths a statistic or a scaler keeps rather than making float64.
NARROW = dt.F32 | dt.F16 | dt.BF16 | dt.COMPLEX

SPLITTERS = frozenset({"sklearn.model_selection.train_test_split"})
# Transformers whose `fit_transform`/`transform` give float32 for float32 and float64 otherwise.
FLOAT_TRANSFORMERS = frozenset(
    """StandardScaler MinMaxScaler RobustScaler MaxAbsScaler Normalizer QuantileTransformer
    PowerTransformer PolynomialFeatures PCA""".split()
)
TRANSFORMING_METHODS = frozenset({"fit_transform", "transform"})


def read() -> Value:
    """`pd.read_csv(path)`: a frame of float64, int64 or bool columns."""
    return Value(FRAME | READ_DTYPES, origin="a pandas frame read from a file")


def constructed(positional: list[Value], keywords: dict[str, Value]) -> Value:
    """`pd.DataFrame(array)`: the array's dtype (`dtype=` says otherwise); else unknown."""
    if "dtype" in keywords:
        return Value(FRAME | dt.dtype_named(keywords["dtype"]))
    data = positional[0] if positional else keywords.get("data", EMPTY)
    known = data.dtype if data.flags & (Flag.NDARRAY | Flag.FRAME) and not data.is_tensor_like else 0
    return Value(FRAME | known)


def promoted(dtype: int) -> int:
    """The dtype of a statistic or a scaler's output: float64 for any known set of wide numbers."""
    if not dtype or dtype & NARROW:
        return 0
    return dt.F64


def attribute(frame: Value, attr: str) -> Value:
    """`df.values`: an array of the columns' dtype; `df.iloc`, `df.T`, `df.price`: a frame."""
    if attr == "values":
        return Value(Flag.NDARRAY | frame.dtype)
    if attr in INDEXERS or attr not in NOT_COLUMNS and not attr.startswith("_"):
        return Value(FRAME | frame.dtype)
    return EMPTY


def method(frame: Value, name: str, positional: list[Value], keywords: dict[str, Value]) -> Value:
    if name == "to_numpy":
        target = keywords.get("dtype", positional[0] if positional else None)
        return Value(Flag.NDARRAY | (dt.dtype_named(target) if target is not None else frame.dtype))
    if name == "astype":
        target = positional[0] if positional else keywords.get("dtype", EMPTY)
        return Value(FRAME | dt.dtype_named(target))
    if name in SELECTING_METHODS:
        return Value(FRAME | frame.dtype)
    if name == "reset_index":  # the old index becomes an int64 column, unless dropped
        return Value(FRAME | (frame.dtype | dt.INT if frame.dtype else 0))
    if name in FLOAT_STATISTICS:
        return Value(FRAME | promoted(frame.dtype))
    return EMPTY


def split(positional: list[Value]) -> Value:
    """`X_train, X_test, y_train, y_test = train_test_split(X, y)`: the rows of each array, in
    that order, as fresh arrays (an index takes a copy: no reversed stride is kept)."""
    parts = [value.with_flags(remove=ARRAY_LAYOUT) for value in positional]
    items = tuple(part for part in parts for _ in range(2))
    return Value(Flag.CONTAINER, items=items, elem=merge_all(list(items)))


def transformed(estimator: Value, positional: list[Value]) -> Value:
    """`scaler.fit_transform(X)`: float64 for any input but float32 (and unknown input)."""
    data = positional[0] if positional else EMPTY
    dtype = promoted(data.dtype & DTYPES) if estimator.callee in FLOAT_TRANSFORMERS else 0
    return Value(Flag.NDARRAY | dtype)
