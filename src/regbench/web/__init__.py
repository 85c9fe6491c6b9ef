"""The dashboard: pages and data over the store, as a static report or a live ASGI app.

==================  ==============================================================================
module              job
==================  ==============================================================================
``data``            :class:`Dashboard`: every payload (index, sparklines, series, runs) from the store
``pages``           the HTML pages (Jinja2 templates in ``templates/``), shared by both front ends
``static_site``     ``regbench report -o DIR``: the pages and payloads as files (works from file://)
``app``             ``regbench serve``: the same pages live (Starlette), log in, alert triage
``static/``         the pages' script and style, and the vendored chart library (uPlot, MIT)
==================  ==============================================================================
"""
