from .cli import app_main

app_main()
