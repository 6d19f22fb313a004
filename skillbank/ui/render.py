"""Memory text as safe HTML, and the small formatting helpers the templates use.

Skill bodies, critiques and feedback were written by models and strangers: raw HTML in them is
shown as text (markdown-it with `html=False` escapes it) and links may only use web, mail or
relative targets (markdown-it refuses `javascript:`, `vbscript:`, `file:` and non-image `data:`);
images are links to them, but for inline `data:` ones (the page's CSP loads no other image).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from markupsafe import Markup


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    md.add_render_rule("image", _image)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("link_close", _link_close)
    return md


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A link, counted in this render's `env`: an image inside one is its words (`_image`)."""
    env["links_open"] = env.get("links_open", 0) + 1
    return self.renderToken(tokens, idx, options, env)


def _link_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    env["links_open"] = env.get("links_open", 0) - 1
    return self.renderToken(tokens, idx, options, env)


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as a link to it, unless its data is inline (`data:image/...`): the page's CSP
    loads images from the page itself only, so `![track](http://evil.example/pixel.png)` was an
    `<img>` the browser refused, a console error on the page (hunt-browser #7, session 31); a
    relative one would fetch one of the browser's own pages as an image."""
    from markdown_it.common.utils import escapeHtml

    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    if src.lower().startswith("data:image/"):
        return self.image(tokens, idx, options, env)
    alt = self.renderInlineAsText(token.children or [], options, env)
    # Counted as the links render: summing the tokens before each image took 11 s for 16,000
    # images under MARKDOWN_LIMIT, in an untrusted experience's feedback (review 3, session 31).
    if env.get("links_open", 0) > 0:  # an image in a link (a badge): its words, not a link
        return f"image: {escapeHtml(alt or src)}"
    return (f'<a href="{escapeHtml(src)}" class="image-link" rel="noopener noreferrer">'
            f'image: {escapeHtml(alt or src)}</a>')


#: Longer text is shown as plain text, not rendered: markdown-it took 22 s on a 900 KB body of
#: `![` (under the 1 MiB SKILL.md limit), a reviewer's page for a held skill (hunt-browser #3,
#: session 31). The longest SKILL.md of a 1,853-skill corpus is 74 KB.
MARKDOWN_LIMIT = 100_000


def markdown(text: str | None) -> Markup:
    """Markdown to HTML with every tag in the source escaped (never trusted); text longer than
    MARKDOWN_LIMIT characters as it is, in a `<pre>`, saying why."""
    from markupsafe import escape

    text = text or ""
    if len(text) > MARKDOWN_LIMIT:
        return Markup(f'<p class="muted small too-long">This text is {len(text):,} characters, '
                      f'more than the {MARKDOWN_LIMIT:,} rendered as markdown: it is shown as '
                      f'plain text.</p>\n<pre class="block">{escape(text)}</pre>')
    return Markup(_markdown().render(text))


def when(value: Any) -> str:
    """A timestamp as people read it (UTC, minutes)."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return "" if value is None else str(value)


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def help_rate(good: int, bad: int) -> float | None:
    """Share of judged uses that helped; None until someone judged one."""
    judged = good + bad
    return None if judged == 0 else good / judged


def score(value: Any) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "–"


def tool_input(value: Any, limit: int = 2000) -> str:
    """A step's `action_input` as text (JSON for structures, unicode kept), at most `limit`
    characters; the template escapes it."""
    import json

    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                            default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def url_name(name: str) -> str:
    """A skill's name as one path segment of its page's URL, every `/` in it encoded (`%2F`).

    A read-only root may serve names with `/` (`team/deploy`), and nothing stops a frontmatter
    `name: "other/files/SKILL.md"`: kept unencoded, that skill's link was another skill's file
    page (`/skills/{name}/files/{path}`), and its own body was unreachable in the browser while
    Accept served it (hunt-browser #2, session 31). A name of `.` or `..` is `!.` / `!..`:
    browsers read `%2E` and `%2E%2E` as dot segments too (WHATWG URL), so `/skills/%2E%2E` opened
    the library and the skill could not be read or accepted (hunt-ui #4, session 37). A literal
    `!` begins no other name's segment (`quote` makes it `%21`, which no browser decodes), so
    the marker is unambiguous. `name_of` (and `skill_path`) read it back."""
    from urllib.parse import quote

    name = str(name)
    return DOT_MARK + name if name in (".", "..") else quote(name, safe="")


#: What precedes a name of `.` or `..` in its URL segment (`url_name`).
DOT_MARK = "!"


def name_of(segment: str) -> str:
    """A skill's name from its URL segment as sent (still percent-encoded): `url_name` undone."""
    from urllib.parse import unquote

    if segment in (DOT_MARK + ".", DOT_MARK + ".."):
        return segment[len(DOT_MARK):]
    return unquote(segment, errors="replace")


def skill_path(raw_path: str) -> tuple[str, str | None]:
    """(skill name, file path or None) of a `/skills/...` URL's path as sent, still
    percent-encoded (the ASGI `raw_path`; the decoded path cannot tell a `/` of the name from
    one of the route): `{url_name}` alone is the skill's page, `{url_name}/files/{path}` one of
    its files. A path whose name has a raw `/` and no `files/` after its first part (a link
    written before names were encoded: `/skills/team/deploy`) names the whole skill."""
    from urllib.parse import unquote

    first, slash, rest = raw_path.partition("/")
    if slash and rest.startswith("files/"):
        return name_of(first), unquote(rest[len("files/"):], errors="replace")
    if slash and rest.strip("/"):
        return unquote(raw_path.rstrip("/"), errors="replace"), None
    return name_of(first), None


FILTERS = {"markdown": markdown, "when": when, "percent": percent, "score": score,
           "tool_input": tool_input, "url_name": url_name}
