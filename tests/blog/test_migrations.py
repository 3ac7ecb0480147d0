import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_migrations_create_the_vector_extension():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()

    assert row is not None
    assert tuple(int(part) for part in row[0].split(".")[:2]) >= (0, 8)
