package prometheus_test

import (
	"fmt"
	"log"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	monbanprom "github.com/monbandb/monban/contrib/prometheus"
	"github.com/monbandb/monban/lsm"
)

// Register a Collector and read one metric back, as a scrape would.
// Serve reg with promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).
func Example() {
	dir, err := os.MkdirTemp("", "monban-prom-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := lsm.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(monbanprom.NewCollector(db))

	db.Put([]byte("a"), []byte("1"))
	db.Delete([]byte("b")) // no filter admits "b": elided, nothing written

	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "monban_deletes_elided_total" {
			fmt.Println(mf.GetName(), mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	// Output: monban_deletes_elided_total 1
}
