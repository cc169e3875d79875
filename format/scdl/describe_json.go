package scdl

import (
	"encoding/json"
	"fmt"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/internal/jsonout"
)

// The JSON shapes of what inspect, inspect --sample and verify print for an SCDL archive
// (docs/schema): explicit output structs with snake_case keys, each opening with
// format.DocJSON.

// formatName is the format's name in the registry and in its JSON documents.
const formatName = "scdl"

// DescriptionJSON is the JSON form of an archive's description.
type DescriptionJSON struct {
	format.DocJSON
	Version      string             `json:"version"`
	Backend      string             `json:"backend"`
	HasHeader    bool               `json:"has_header"`
	NumCells     jsonout.I64        `json:"num_cells"`
	NumValues    jsonout.I64        `json:"num_values"`
	MaxGenes     jsonout.I64        `json:"max_genes"`
	DTypes       DTypesJSON         `json:"dtypes"`
	Arrays       []ArrayJSON        `json:"arrays"`
	FeatureIndex []FeatureIndexJSON `json:"feature_indexes"`
}

// DTypesJSON names the dtypes of the three arrays.
type DTypesJSON struct {
	Data   string `json:"data"`
	RowPtr string `json:"row_ptr"`
	ColPtr string `json:"col_ptr"`
}

// ArrayJSON is one array of the header.
type ArrayJSON struct {
	Name      string      `json:"name"`
	NumValues jsonout.U64 `json:"num_values"`
	DType     string      `json:"dtype"`
	Shape     []uint32    `json:"shape,omitempty"`
}

// FeatureIndexJSON is a feature index (var, obs) with its blocks.
type FeatureIndexJSON struct {
	Name   string      `json:"name"`
	Blocks []BlockJSON `json:"blocks"`
}

// BlockJSON is one block of a feature index: cells [start, end) share its table.
type BlockJSON struct {
	Start   jsonout.I64  `json:"start"`
	End     jsonout.I64  `json:"end"`
	Label   string       `json:"label"`
	NumRows jsonout.I64  `json:"num_rows"`
	Columns []ColumnJSON `json:"columns"`
}

// ColumnJSON is a feature table's column.
type ColumnJSON struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

func (d description) MarshalJSON() ([]byte, error) {
	r := d.r
	h := r.Header()
	dt, rp, cp := r.DTypes()
	out := DescriptionJSON{DocJSON: format.NewDocJSON(jsonout.KindInspect, formatName, r.dir),
		Version: fmt.Sprintf("%d.%d.%d", h.Version[0], h.Version[1], h.Version[2]), Backend: h.Backend.String(),
		HasHeader: r.HasHeader(), NumCells: jsonout.I64(r.NumRows()), NumValues: jsonout.I64(r.NNZ()),
		MaxGenes: jsonout.I64(r.MaxGenes()), DTypes: DTypesJSON{Data: dt.String(), RowPtr: rp.String(), ColPtr: cp.String()},
		Arrays: make([]ArrayJSON, len(h.Arrays)), FeatureIndex: []FeatureIndexJSON{}}
	for i, a := range h.Arrays {
		out.Arrays[i] = ArrayJSON{Name: a.Name, NumValues: jsonout.U64(a.Length), DType: a.DType.String(), Shape: a.Shape}
	}
	for _, idx := range []*FeatureIndex{r.Var, r.Obs} {
		if idx == nil {
			continue
		}
		fi := FeatureIndexJSON{Name: idx.Name, Blocks: make([]BlockJSON, len(idx.Blocks))}
		for i, b := range idx.Blocks {
			bj := BlockJSON{Start: jsonout.I64(b.Start), End: jsonout.I64(b.End), Label: b.Label, NumRows: jsonout.I64(b.TableRows),
				Columns: make([]ColumnJSON, len(b.Columns))}
			for k, c := range b.Columns {
				bj.Columns[k] = ColumnJSON{Name: c.Name, Kind: c.Kind.String()}
			}
			fi.Blocks[i] = bj
		}
		out.FeatureIndex = append(out.FeatureIndex, fi)
	}
	return json.Marshal(out)
}

// CellJSON is the JSON form of a CellText: the stored values of a cell and their genes.
type CellJSON struct {
	format.DocJSON
	Index    jsonout.I64     `json:"index"`
	NumCells jsonout.I64     `json:"num_cells"`
	Values   []jsonout.Float `json:"values"`
	Genes    []uint32        `json:"genes"`
}

// MarshalJSON encodes the cell as CellJSON.
func (c CellText) MarshalJSON() ([]byte, error) {
	genes := c.Genes
	if genes == nil {
		genes = []uint32{}
	}
	return json.Marshal(CellJSON{DocJSON: format.NewDocJSON(jsonout.KindSample, formatName, c.File),
		Index: jsonout.I64(c.Cell), NumCells: jsonout.I64(c.Of), Values: jsonout.Floats(c.Values), Genes: genes})
}

// VerifyJSON is the JSON form of a VerifyReport.
type VerifyJSON struct {
	format.DocJSON
	HasHeader    bool        `json:"has_header"`
	NumCells     jsonout.I64 `json:"num_cells"`
	NumValues    jsonout.I64 `json:"num_values"`
	MaxGenes     jsonout.I64 `json:"max_genes"`
	DTypes       DTypesJSON  `json:"dtypes"`
	NumVarBlocks int         `json:"num_var_blocks"`
	NumObsBlocks int         `json:"num_obs_blocks"`
	NumNonFinite jsonout.I64 `json:"num_non_finite"`
	Checksummed  bool        `json:"checksummed"`
}

func (t verifyText) MarshalJSON() ([]byte, error) {
	rep := t.rep
	return json.Marshal(VerifyJSON{DocJSON: format.NewDocJSON(jsonout.KindVerify, formatName, rep.Dir), HasHeader: t.hasHeader,
		NumCells: jsonout.I64(rep.Cells), NumValues: jsonout.I64(rep.NNZ), MaxGenes: jsonout.I64(rep.MaxGenes),
		DTypes:       DTypesJSON{Data: rep.Data.String(), RowPtr: rep.RowPtr.String(), ColPtr: rep.ColPtr.String()},
		NumVarBlocks: rep.VarBlocks, NumObsBlocks: rep.ObsBlocks, NumNonFinite: jsonout.I64(rep.NonFinite)})
}
