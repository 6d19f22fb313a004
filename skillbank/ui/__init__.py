"""The memory browser: a local web page to see, review and curate what an agent remembers.

`skillbank ui` serves it; `create_app(bank)` builds the Starlette app over any bank's public API.
"""

from skillbank.ui.app import create_app
from skillbank.ui.security import Guard

__all__ = ["Guard", "create_app"]
