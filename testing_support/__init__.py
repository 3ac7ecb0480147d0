"""Support shared by tests/ and bench/: a live server subprocess, a scripted model server, /proc."""
