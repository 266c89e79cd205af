module gort/tools/go_sleep_probe

go 1.19
