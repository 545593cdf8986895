"""The API's routers, one module per resource (included by ``api.app.api_router``)."""

__all__: list[str] = []
