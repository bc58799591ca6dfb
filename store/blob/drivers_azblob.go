//go:build azblob

package blob

// azblob://: Azure Blob Storage, built with -tags azblob.
import _ "gocloud.dev/blob/azureblob"
