"""The same query text through ``spark.sql`` and through ``ddlab.sql``: random queries of the
fuzzer's grammar (Spark's dialect is the one both read) over the same rows, NULLs included,
compared as multisets after inserts and deletes.  Marked ``spark`` (the fixture)."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from .gen import Query, schema, updates
from .oracle import Pair, as_bag, cols_typed

SEEDS = range(12)


def _spark_answer(spark, tables, contents, query):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    for t, cols in tables.items():
        fields = [StructField(c, StringType() if typ == "VARCHAR" else LongType(), True)
                  for c, typ in cols_typed(cols)]
        rows = list(contents[t].elements())
        spark.createDataFrame(rows, StructType(fields)).createOrReplaceTempView(t)
    return as_bag(tuple(r) for r in spark.sql(query).collect())


@pytest.mark.parametrize("seed", SEEDS)
def test_spark_sql_agrees_on_random_queries(spark, seed):
    rng = random.Random(seed)
    tables = schema(rng)
    query = Query(rng, tables).any()
    pair = Pair(tables, query)
    for epoch in updates(rng, tables, 2):
        for table, ins, rem in epoch:
            pair.update(table, ins, rem)
        pair.step()
        contents = {t: Counter({r: m for r, m in c.items() if m > 0})
                    for t, c in pair.contents.items()}
        assert pair.ours() == _spark_answer(spark, tables, contents, query), query
