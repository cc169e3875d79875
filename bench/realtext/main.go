// Command realtext turns the files of Debian's fortunes and manpages packages, unpacked with
// dpkg-deb -x under one root, into JSONL corpora of real text for benchmarks: one JSON object
// per fortune or man page, {"id", "lang", "source", "text"} in that order (the text last, so a
// reader looking for "text" passes the other keys first), the text as it is in the file
// (fortunes: the lines between two "%" lines; man pages: the roff source, ungzipped), encoded
// as encoding/json does without HTML escaping: UTF-8 as it is, "\n", "\t", "\"", "\\" and
// other control characters as "\u00XX" escapes.
//
// It writes one file per part, each repeated (whole, in order, with the repetition in the id)
// until it reaches its size:
//
//	fortunes-en  usr/share/games/fortunes/*            (fortunes, fortunes-min)
//	fortunes-eu  usr/share/games/fortunes/{de,es,it}/  (fortunes-de, -es, -it)
//	fortunes-ru  usr/share/games/fortunes/ru/          (fortunes-ru)
//	manpages     usr/share/man/**/*.gz                 (manpages)
//
// Files are read in lexical order, symbolic links and the .dat indexes skipped, so the output
// depends only on the packages' contents. Lines that are not valid UTF-8 (a few old fortunes
// in Latin-1) are read as Latin-1, as their authors wrote them.
//
// Usage:
//
//	go run ./bench/realtext -root bench/data/realtext/root -out bench/data/realtext \
//	    -mb fortunes-en=120,fortunes-eu=60,fortunes-ru=199,manpages=139
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

func main() {
	var root, out, sizes string
	flag.StringVar(&root, "root", "", "directory the .deb packages were unpacked into (dpkg-deb -x)")
	flag.StringVar(&out, "out", "", "output directory: PART.jsonl per part")
	flag.StringVar(&sizes, "mb", "fortunes-en=120,fortunes-eu=60,fortunes-ru=199,manpages=139",
		"PART=MB,...: the parts to write and their sizes in MB (10^6 bytes; 0: the packages once)")
	flag.Parse()
	if err := run(root, out, sizes); err != nil {
		fmt.Fprintln(os.Stderr, "realtext:", err)
		os.Exit(1)
	}
}

// doc is one object of the corpus.
type doc struct {
	ID     string `json:"id"`
	Lang   string `json:"lang"`
	Source string `json:"source"`
	Text   string `json:"text"`
}

func run(root, out, sizes string) error {
	if root == "" || out == "" {
		return errors.New("-root and -out are required")
	}
	for _, kv := range strings.Split(sizes, ",") {
		part, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-mb: %q is not PART=MB", kv)
		}
		mb, err := strconv.ParseFloat(v, 64)
		if err != nil || mb < 0 {
			return fmt.Errorf("-mb: %q: bad size", kv)
		}
		docs, err := collect(root, part)
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			return fmt.Errorf("%s: no documents under %s (are the packages unpacked there?)", part, root)
		}
		if err := write(filepath.Join(out, part+".jsonl"), docs, int64(mb*1e6)); err != nil {
			return err
		}
	}
	return nil
}

// collect returns the documents of one part, in a fixed order.
func collect(root, part string) ([]doc, error) {
	games := filepath.Join(root, "usr/share/games/fortunes")
	switch part {
	case "fortunes-en":
		return fortunes(games, "", "en")
	case "fortunes-eu":
		var all []doc
		for _, lang := range []string{"de", "es", "it"} {
			d, err := fortunes(games, lang, lang)
			if err != nil {
				return nil, err
			}
			all = append(all, d...)
		}
		return all, nil
	case "fortunes-ru":
		return fortunes(games, "ru", "ru")
	case "manpages":
		return manpages(filepath.Join(root, "usr/share/man"))
	}
	return nil, fmt.Errorf("unknown part %q (fortunes-en, fortunes-eu, fortunes-ru, manpages)", part)
}

// fortunes reads the fortune files of dir/sub (its subdirectories too, except for the top
// level, whose subdirectories are the other languages).
func fortunes(dir, sub, lang string) ([]doc, error) {
	base := filepath.Join(dir, sub)
	var files []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if sub == "" && p != base {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasSuffix(p, ".dat") && !strings.HasSuffix(p, ".u8") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var docs []doc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src, _ := filepath.Rel(dir, f)
		src = "fortunes/" + filepath.ToSlash(src)
		n := 0
		for _, t := range splitFortunes(text(b)) {
			n++
			docs = append(docs, doc{ID: src + ":" + strconv.Itoa(n), Lang: lang, Source: src, Text: t})
		}
	}
	return docs, nil
}

// splitFortunes cuts a fortune file at its "%" lines, dropping empty fortunes.
func splitFortunes(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	var out []string
	for _, f := range strings.Split("\n"+s, "\n%\n") {
		f = strings.TrimPrefix(f, "\n")
		f = strings.TrimSuffix(strings.TrimSuffix(f, "\n%"), "\n")
		if strings.TrimSpace(f) != "" {
			out = append(out, f)
		}
	}
	return out
}

// manpages reads every gzipped man page under dir.
func manpages(dir string) ([]doc, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".gz") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var docs []doc
	for _, f := range files {
		b, err := gunzip(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		rel = strings.TrimSuffix(filepath.ToSlash(rel), ".gz")
		lang := "en"
		if first, _, _ := strings.Cut(rel, "/"); !strings.HasPrefix(first, "man") {
			lang = first
		}
		docs = append(docs, doc{ID: "man/" + rel, Lang: lang, Source: "manpages/" + rel, Text: text(b)})
	}
	return docs, nil
}

func gunzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// text is b as a string: UTF-8 as it is, anything else read as Latin-1.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// write writes docs to path, repeated until the file holds size bytes (at least once).
func write(path string, docs []doc, size int64) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	var n int64
	for rep := 1; rep == 1 || n < size; rep++ {
		for _, d := range docs {
			if rep > 1 {
				d.ID += "#" + strconv.Itoa(rep)
			}
			line.Reset()
			if err := enc.Encode(d); err != nil {
				return err
			}
			k, err := w.Write(line.Bytes())
			if err != nil {
				return err
			}
			n += int64(k)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "realtext: %s: %d documents, %.1f MB\n", path, len(docs), float64(n)/1e6)
	return os.Rename(path+".tmp", path)
}
