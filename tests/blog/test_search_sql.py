import datetime as dt

import pytest
from django.db import connection, transaction
from django.utils import timezone
from psycopg import pq

from blog import search_sql
from blog.models import Chunk
from blog.search import article_search
from blog.search_lists import chunk_nearest
from tests.blog.test_search import VectorBook, unit

pytestmark = pytest.mark.django_db


def ids(rows: list[dict]) -> list[int]:
    return [row["id"] for row in rows]


def test_one_statement_gives_each_language_its_own_nearest_list(make_article, add_chunk):
    near_en = add_chunk(make_article(title="Near en"), "one", unit((0, 1.0)))
    far_en = add_chunk(make_article(title="Far en"), "two", unit((0, 0.5), (1, 0.5)))
    far_zh = add_chunk(make_article(title="Far zh"), "three", unit((0, 0.2), (1, 0.8)))
    near_zh = add_chunk(make_article(title="Near zh"), "four", unit((0, 0.9), (1, 0.1)))
    Chunk.objects.filter(pk__in=[far_zh.pk, near_zh.pk]).update(language="zh")
    Chunk.objects.filter(pk__in=[near_en.pk, far_en.pk]).update(language="en")
    query = unit((0, 1.0))

    with transaction.atomic():
        en, zh, any_language = search_sql.vector_lists(
            vector=query, lexemes=[], k=10, languages=("en", "zh", None)
        )
        orm = {
            lang: ids(chunk_nearest(vector=query, k=10, language=lang).values("id"))
            for lang in ("en", "zh", None)
        }

    assert ids(en) == [near_en.pk, far_en.pk] == orm["en"]
    assert ids(zh) == [near_zh.pk, far_zh.pk] == orm["zh"]
    assert ids(any_language) == [near_en.pk, near_zh.pk, far_en.pk, far_zh.pk] == orm[None]
    assert en[0]["distance"] == pytest.approx(0.0, abs=1e-6)
    assert en[0]["article__title"] == "Near en"


def test_the_rows_carry_the_query_lexemes_each_chunk_holds(make_article, add_chunk):
    chunk = add_chunk(make_article(title="Kites"), "Flying kites in strong wind.", unit((0, 1.0)))

    with transaction.atomic():
        (rows,) = search_sql.vector_lists(
            vector=unit((0, 1.0)), lexemes=["kite", "wind", "rain"], k=5, languages=(None,)
        )
    two, more = search_sql.text_rows(
        vector=unit((0, 1.0)), k=5, ranking="'kite' | 'rain'", pairs=None, lexical="kites rain"
    )

    assert ids(rows) == [chunk.pk] and sorted(rows[0]["matched"]) == ["kite", "wind"]
    assert two == [] and ids(more) == [chunk.pk]
    assert more[0]["matched"] == ["kite"]  # the lexemes of "kites rain" that it holds
    assert more[0]["distance"] == pytest.approx(0.0, abs=1e-6)


def test_matched_holds_the_query_lexemes_in_the_chunk_in_tsvector_order(make_article, add_chunk):
    text = "Wind, kites and rain: flying kites in the wind."
    add_chunk(make_article(title="Kites"), text, unit((0, 1.0)))

    def matched(lexemes: list[str]) -> list[str]:
        with transaction.atomic():
            ((row,),) = search_sql.vector_lists(
                vector=unit((0, 1.0)), lexemes=lexemes, k=5, languages=(None,)
            )
        return row["matched"]

    # The tsvector's own order (sorted), each lexeme once, whatever the query's order.
    assert matched(["wind", "snow", "kite", "rain", "kite"]) == ["kite", "rain", "wind"]
    assert matched(["snow"]) == []
    assert matched([]) == []


def test_matched_is_computed_without_a_subquery_per_row(make_article, add_chunk):
    add_chunk(make_article(title="Kites"), "Flying kites in strong wind.", unit((0, 1.0)))
    vector_sql = search_sql.vector_statement(
        vector=unit((0, 1.0)), lexemes=["kite"], k=5, languages=("en", "zh")
    )
    lexical_sql = search_sql.vector_statement(
        vector=unit((0, 1.0)), lexemes=None, lexical="kites", k=5, languages=(None,)
    )
    text_sql = search_sql.text_statement(
        vector=unit((0, 1.0)),
        k=5,
        ranking="'kite' | 'wind'",
        pairs="'kite' & 'wind'",
        lexical="kites wind",
    )
    for sql, params in (vector_sql, lexical_sql, text_sql):
        with transaction.atomic(), search_sql.search_cursor() as cursor:
            cursor.execute("EXPLAIN (VERBOSE, COSTS OFF) " + sql, params)
            plan = "\n".join(row["QUERY PLAN"] for row in cursor.fetchall())
        # A correlated subquery (a SubPlan) runs once per candidate row, about 45 us each at
        # 100k chunks; the query's lexemes are InitPlans, computed once per statement.
        assert "SubPlan" not in plan, plan
        assert "InitPlan" in plan, plan


def test_single_term_matches_are_only_ranked_when_pairs_leave_room(make_article, add_chunk):
    pair = add_chunk(make_article(title="Pair"), "Ballast and a mooring mast.", unit((0, 1.0)))
    single = add_chunk(make_article(title="Single"), "Ballast only.", unit((1, 1.0)))
    ask = {"vector": None, "ranking": "'ballast' | 'moor'", "pairs": "('ballast' & 'moor')"}

    two_full, more_skipped = search_sql.text_rows(k=1, **ask)
    two, more = search_sql.text_rows(k=5, **ask)

    assert ids(two_full) == [pair.pk] and more_skipped == []
    assert ids(two) == [pair.pk] and ids(more) == [pair.pk, single.pk]
    assert two[0]["distance"] is None  # no vector: no evidence computed


def test_the_published_rule_holds_in_both_statements(make_article, add_chunk):
    later = make_article(title="Later", published_at=timezone.now() + dt.timedelta(days=1))
    draft = make_article(title="Draft", status="draft")
    for article in (later, draft):
        add_chunk(article, "Ballast and a mooring mast.", unit((0, 1.0)))

    with transaction.atomic():
        (nearest,) = search_sql.vector_lists(
            vector=unit((0, 1.0)), lexemes=[], k=5, languages=(None,)
        )
    two, more = search_sql.text_rows(
        vector=None, k=5, ranking="'ballast' | 'moor'", pairs="('ballast' & 'moor')"
    )

    assert nearest == [] and two == [] and more == []


def test_the_binary_vector_adapter_stays_on_the_search_cursor(make_article, add_chunk):
    chunk = add_chunk(make_article(title="A"), "text", unit((0, 1.0)))

    with transaction.atomic():
        search_sql.vector_lists(vector=unit((0, 1.0)), lexemes=[], k=5, languages=(None,))
    with connection.cursor() as cursor:
        cursor.execute("SELECT embedding FROM blog_chunk WHERE id = %s", [chunk.pk])
        raw = cursor.fetchone()[0]

    # Django's own cursors still read vectors as text, as pgvector.django expects.
    assert isinstance(raw, str) and raw.startswith("[1")
    assert list(Chunk.objects.get(pk=chunk.pk).embedding[:2]) == [1.0, 0.0]


def test_each_language_list_is_planned_on_its_own_partial_hnsw_index(make_article):
    articles = [make_article(title=f"Article {n}") for n in range(10)]
    Chunk.objects.bulk_create(
        Chunk(
            article=articles[i % 10],
            ordinal=i,
            text="text",
            lexical="text",
            embedding=unit((i % 384, 1.0), ((i * 7 + 1) % 384, 0.5)),
            language="zh" if i % 2 else "en",
            embedding_model="hand-made",
            content_hash=str(i),
        )
        for i in range(400)
    )
    sql, params = search_sql.vector_statement(
        vector=unit((0, 1.0)), lexemes=[], k=10, languages=("en", "zh", None)
    )
    with transaction.atomic(), search_sql.search_cursor() as cursor:
        # Earlier tests' rolled-back rows stay in the graphs as dead pages, and pgvector
        # costs a scan by pages per live row: with enough of them the shared graph came out
        # cheaper than the English one (CI, stop 47). Rebuilt, the graphs hold only these
        # rows, as after `manage.py reindex`; and at 200 rows a language's own graph has one
        # level fewer than the shared graph's 400 (pgvector's entry level is
        # ln(rows) / ln(m)), so the planner's preference is not a near tie.
        for index in ("chunk_embedding_hnsw", "chunk_embedding_hnsw_en", "chunk_embedding_hnsw_zh"):
            cursor.execute(f"REINDEX INDEX {index}")
        cursor.execute("ANALYZE blog_chunk")
        # On a table this small an exact sort is cheaper and the planner rightly prefers it.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row["QUERY PLAN"] for row in cursor.fetchall())

    print(plan)
    assert "Index Scan using chunk_embedding_hnsw_en on blog_chunk" in plan
    assert "Index Scan using chunk_embedding_hnsw_zh on blog_chunk" in plan
    assert "Index Scan using chunk_embedding_hnsw on blog_chunk" in plan  # any language


def test_a_search_waits_on_the_database_once(make_article, add_chunk, tmp_path):
    add_chunk(make_article(title="Kites"), "Flying kites in strong wind.", unit((0, 1.0)))
    book = VectorBook({"kites in wind": unit((0, 1.0))})
    article_search(query="kites in wind", limit=5, embedder=book)  # learns the vocabulary
    trace = tmp_path / "libpq.trace"
    pgconn = connection.connection.pgconn

    with trace.open("w") as out:
        pgconn.trace(out.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            hits = article_search(query="kites in wind", limit=5, embedder=book)
        finally:
            pgconn.untrace()

    messages = [line.split("\t") for line in trace.read_text().splitlines()]
    # Vocabulary key, query lexemes, HNSW settings, vector lists and full text: one batch,
    # answered by one ReadyForQuery (each statement on its own took a round trip).
    assert sum(m[0] == "B" and m[2] == "ReadyForQuery" for m in messages if len(m) > 2) == 1
    assert sum(m[0] == "F" and m[2] == "Execute" for m in messages if len(m) > 2) == 5
    assert [hit.title for hit in hits] == ["Kites"]


def test_hidden_chunks_ranked_first_do_not_take_the_visible_ones_places(make_article, add_chunk):
    later = timezone.now() + dt.timedelta(days=1)
    for n in range(3):  # the best-ranked rows: every term, twice
        scheduled = make_article(title=f"Later {n}", published_at=later)
        add_chunk(scheduled, "Ballast mooring. Ballast mooring.", unit((0, 1.0)))
    visible = [
        add_chunk(
            make_article(title=f"Now {n}"), f"Ballast and a mooring mast {n}.", unit((0, 1.0))
        )
        for n in range(2)
    ]

    two, _ = search_sql.text_rows(
        vector=None, k=2, ranking="'ballast' | 'moor'", pairs="('ballast' & 'moor')"
    )

    assert sorted(ids(two)) == sorted(chunk.pk for chunk in visible)


def _nodes(node: dict):
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _capped(node: dict) -> list[dict]:
    """The plan's lowest Limit nodes over a scan of blog_chunk: the text half's caps."""
    below = [limit for child in node.get("Plans", []) for limit in _capped(child)]
    if below:
        return below
    scans_chunks = any(n.get("Relation Name") == "blog_chunk" for n in _nodes(node))
    return [node] if node["Node Type"] == "Limit" and scans_chunks else []


def test_the_capped_matches_look_up_each_article_not_all_of_them(make_article, add_chunk):
    # The cap keeps SEARCH_TEXT_MAX_MATCHES visible matches: at 100k chunks the planner hashed
    # all 9,500 visible articles to find them whenever it expected many matches (1.9 ms of a
    # 4 ms statement). Joins other than a look-up per match are disabled here, as that
    # estimate would: the caps must still look each match's article up, by its id.
    for n in range(3):
        add_chunk(make_article(title=f"Kites {n}"), "Kites in wind.", unit((0, 1.0)))
    sql, params = search_sql.text_statement(
        vector=None, k=5, ranking="'kite' | 'wind'", pairs="('kite' & 'wind')", lexical="kite"
    )
    with transaction.atomic(), search_sql.search_cursor() as cursor:
        cursor.execute("SET LOCAL enable_nestloop = off")
        cursor.execute("SET LOCAL enable_mergejoin = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()["QUERY PLAN"][0]["Plan"]

    caps = _capped(plan)
    articles = [n for cap in caps for n in _nodes(cap) if n.get("Relation Name") == "blog_article"]
    assert len(caps) == 2 and len(articles) == 2, plan  # the two-term and the any-term lists
    for scan in articles:  # each scan is for one match's article, not for all of them
        assert "article_id" in scan.get("Index Cond", "") + scan.get("Filter", ""), scan
