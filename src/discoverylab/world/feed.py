"""DiscoveryFeed: the in-world social feed where NPCs post updates and articles."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mypy_extensions import mypyc_attr

from discoverylab.world.unpickle import FastState

POST_TEXT = re.compile(r"Post (\d+)\nPosted by (.+?) on Step \d+:\n(.*?)\n", re.S)  # `Post.render` of an update


def read_posts(text: str) -> list[tuple[str, str]]:
    """(author, content) of every update post as `Post.render` writes it into `text` (what a
    reader of DISCOVERY_FEED_GET_UPDATES' message sees)."""
    return [(author, content) for _, author, content in POST_TEXT.findall(text)]


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
@dataclass(slots=True)
class Post:
    post_id: int
    step: int
    author: str
    content: str
    kind: str = "update"  # "update" or "article"
    title: str = ""
    signals: list[str] = field(default_factory=list)

    def public(self) -> dict[str, object]:
        """The post as shown to agents (signals are an engine detail, never shown)."""
        data: dict[str, object] = {
            "step": self.step,
            "author": self.author,
            "content": self.content,
            "postID": self.post_id,
            "type": self.kind,
        }
        if self.kind == "article":
            data["title"] = self.title
        return data

    def render(self) -> str:
        if self.kind == "article":
            return f"Article {self.post_id}: {self.title}\nSubmitted by {self.author} on Step {self.step}:\n\n{self.content}\n"
        return f"Post {self.post_id}\nPosted by {self.author} on Step {self.step}:\n{self.content}\n"


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled: pickled and copied without `__init__`
class DiscoveryFeed(FastState):
    """Update posts and articles share one post-id counter; the welcome post is id 1."""

    def __init__(self) -> None:
        self.posts: list[Post] = []
        self.signals: dict[int, tuple[str, ...]] = {}  # step -> its posts' signals, in post order (read-only)
        self._next_id = 1
        self.add_update(0, "Colony Founder", "Welcome to Discovery World!")

    def _add(self, post: Post) -> Post:
        self.posts.append(post)
        if post.signals:
            self.signals[post.step] = self.signals.get(post.step, ()) + tuple(post.signals)
        self._next_id += 1
        return post

    def add_update(self, step: int, author: str, content: str, signals: list[str] | None = None) -> Post:
        return self._add(Post(self._next_id, step, author, content, "update", "", list(signals or [])))

    def add_article(self, step: int, author: str, title: str, content: str) -> Post:
        return self._add(Post(self._next_id, step, author, content, "article", title))

    @property
    def updates(self) -> list[Post]:
        return [p for p in self.posts if p.kind == "update"]

    @property
    def articles(self) -> list[Post]:
        return [p for p in self.posts if p.kind == "article"]

    def get(self, post_id: int) -> Post | None:
        for post in self.posts:
            if post.post_id == post_id:
                return post
        return None

    def signals_at(self, step: int) -> tuple[str, ...]:
        """The signals posted for `step` (an index, not a scan; `World.tick` reads `signals` itself)."""
        return self.signals.get(step, ())

    def recent_updates(self, step: int, window: int = 3) -> list[dict[str, object]]:
        return [p.public() for p in self.posts if p.kind == "update" and step - window <= p.step <= step]

    def render_updates(self, max_posts: int = 7) -> str:
        updates = self.updates
        shown = updates[-max_posts:]
        head = (
            "DiscoveryFeed (Update Posts)\n"
            f"DiscoveryFeed contains {len(updates)} update posts.\n"
            f"Showing the most recent {len(shown)} posts.\n\n"
        )
        return head + "---\n".join(p.render() for p in shown) + "(ABOVE WAS MOST RECENT POST)\n"

    def render_articles(self, max_posts: int = 7) -> str:
        arts = self.articles
        shown = arts[-max_posts:]
        head = (
            "DiscoveryFeed (Scientific Articles)\n"
            f"DiscoveryFeed contains {len(arts)} articles.\n"
            f"Showing the most recent {len(shown)} articles.\n\n"
        )
        return head + "---\n".join(p.render() for p in shown)
