package taridx_test

import (
	"archive/tar"
	"bytes"
	"fmt"

	"github.com/mldf/convert/format/taridx"
)

func Example() {
	// A two-sample WebDataset-style shard.
	var shard bytes.Buffer
	tw := tar.NewWriter(&shard)
	for _, m := range []struct{ name, data string }{
		{"train/0001.jpg", "jpeg bytes"}, {"train/0001.cls", "3"},
		{"train/0002.jpg", "more jpeg"}, {"train/0002.cls", "7"},
	} {
		tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data))})
		tw.Write([]byte(m.data))
	}
	tw.Close()

	w := taridx.NewWriter()
	if err := w.AddShard(bytes.NewReader(shard.Bytes()), int64(shard.Len()), "shard-0.tar"); err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	w.WriteTo(&out)

	ix, err := taridx.Parse(out.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rows", len(ix.Rows), "stems", ix.Header.NStems, "exts", ix.Exts, "contiguous", ix.Header.Contiguous())
	for _, i := range ix.Find("0002") {
		r := ix.Rows[i]
		fmt.Printf("%s at %d: %q\n", ix.Ext(i), r.Offset, shard.Bytes()[r.Offset+512:r.Offset+512+r.Size])
	}
	// Output:
	// rows 4 stems 2 exts [jpg cls] contiguous true
	// jpg at 2048: "more jpeg"
	// cls at 3072: "7"
}
