//go:build !linux

package offheap

import "errors"

func mapAnon(int) ([]byte, error) { return nil, errors.New("offheap: no anonymous mappings here") }

func free([]byte) {}
