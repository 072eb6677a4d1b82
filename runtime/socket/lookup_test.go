package socket

import "testing"

func TestParseMapLookup(t *testing.T) {
	reply := `type=str, case=sensitive, found=no
type=beg, case=sensitive, found=yes, idx=tree, key="shop.example.com/", value="be_http:demo:shop-web", type="str"

`
	got, err := ParseMapLookup(reply)
	if err != nil {
		t.Fatal(err)
	}
	want := []MapLookup{{Type: "str"}, {Type: "beg", Found: true, Key: "shop.example.com/", Value: "be_http:demo:shop-web"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := ParseMapLookup("Unknown map identifier. Please use #<id> or <file>.\n"); err == nil {
		t.Fatal("an error reply parsed")
	}
	if got, err := ParseMapLookup(`type=str, case=sensitive, found=yes, idx=tree, key="a, b", value="x", type="str"`); err != nil || got[0].Key != "a, b" {
		t.Fatalf("a key with a comma: %+v, %v", got, err)
	}
}
