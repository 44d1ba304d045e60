"""The forms of the workspace settings page (create, invite, change a role) and of the API tokens page."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from monitor.models import Membership
from monitor.services.tokens import MAX_DAYS


def add_service_errors(form: forms.Form, exc: ValidationError) -> None:
    """Show a service's ValidationError on the form: a field's message by that field, any other on top."""
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, exc)


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown in the header and on every page of the workspace.")


class InviteForm(forms.Form):
    who = forms.CharField(
        label="Username or e-mail address",
        max_length=254,
        help_text="Someone with an account is added at once; any other e-mail address gets an invitation link.",
    )
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.ANALYST)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="What the token is for, e.g. “nightly export”.")
    workspace = forms.ChoiceField(label="Workspace", help_text="A token for one workspace answers 404 for every other.")
    days = forms.IntegerField(label="Valid for (days)", min_value=1, max_value=MAX_DAYS)

    def __init__(self, *args, workspaces=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["workspace"].choices = [("", "All my workspaces")] + [(w.slug, w.name) for w in workspaces]
        self.fields["workspace"].required = False
        self.fields["days"].initial = settings.SPREADWATCH_API_TOKEN_DAYS
