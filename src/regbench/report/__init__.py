"""Presentation: plots (PNG) and other reports built from analysis results."""
