"""Helpers for the book's chapters: translated output text, tables and heatmaps, the build."""
