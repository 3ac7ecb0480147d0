"""The REST API: one ninja router per app, assembled here. Docs at /api/docs."""

from ninja import NinjaAPI

from agent.api import router as agent_router

api = NinjaAPI(title="Docent API", version="1.0", urls_namespace="api")
api.add_router("/", agent_router)
