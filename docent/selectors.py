"""Project-wide reads that belong to neither app."""

from django.contrib.auth import get_user_model


def admin_account_missing() -> bool:
    """True until someone can sign in to the admin (an active staff account exists)."""
    return not get_user_model().objects.filter(is_staff=True, is_active=True).exists()
