"""The input schemas of the offline model's tests' stand-in tools: one definition, for every
test file that runs the planner through the real loop with tools of its own."""

from pydantic import BaseModel, ConfigDict, Field


class SearchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="What to look for.")
    limit: int = Field(default=5, description="How many excerpts.")


class DetailIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    article_id: int = Field(description="The article id.")


class ListIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: str | None = Field(default=None, description="Only this tag.")
    limit: int = Field(default=10, description="How many.")
