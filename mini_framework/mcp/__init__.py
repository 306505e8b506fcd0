from .serve import serve, serve_async

__all__ = ["serve", "serve_async"]
