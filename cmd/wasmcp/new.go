package main

func cmdNew(args []string) error {
	return usagef("new: not available yet")
}
