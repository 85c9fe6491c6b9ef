"""The dashboard: pages and data over the store, as a static report or a live ASGI app.

==================  ==============================================================================
module              job
==================  ==============================================================================
``data``            :class:`Dashboard`: every payload (index, sparklines, series, runs) from the store
``pages``           the HTML pages (Jinja2 templates in ``templates/``), shared by both front ends
``static_site``     ``regbench report -o DIR``: the pages and payloads as files (works from file://)
``app``             ``regbench serve``: the same pages live (Starlette), log in, alert triage
``api``             the HTTP API at ``/api/v1`` (a FastAPI app, its OpenAPI schema): reads, triage, submit
``api_submit``      one submission: parsed as ``regbench import`` parses, stored once by its id
``api_limits``      a token bucket per API token, and reading a body up to a size
``static/``         the pages' script and style, and the vendored chart library (uPlot, MIT)
==================  ==============================================================================
"""
