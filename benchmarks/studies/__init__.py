"""Paper reproductions and parameter studies."""
