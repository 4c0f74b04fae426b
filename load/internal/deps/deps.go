package deps
import (
 _ "fortio.org/fortio/fhttp"
 _ "fortio.org/fortio/periodic"
 _ "fortio.org/fortio/rapi"
 _ "github.com/HdrHistogram/hdrhistogram-go"
 _ "gopkg.in/yaml.v3"
)
