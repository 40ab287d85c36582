#include "base/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace inferd {
namespace {

TEST(Npy, RoundTripsShapesAndTypes) {
  for (const auto& shape : std::vector<std::vector<int64_t>>{{}, {3}, {2, 3}, {1, 0, 4}}) {
    NpyArray a;
    a.dtype = "<f4";
    a.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    a.data.resize(n * 4);
    for (int64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(i) * 0.5f;
      std::memcpy(a.data.data() + i * 4, &f, 4);
    }
    const std::string bytes = SerializeNpy(a);
    EXPECT_EQ((bytes.size() - a.data.size()) % 64, 0u);
    absl::StatusOr<NpyArray> b = ParseNpy(bytes);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->dtype, "<f4");
    EXPECT_EQ(b->shape, shape);
    EXPECT_EQ(b->data, a.data);
  }
}

TEST(Npy, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ParseNpy("hello").ok());
  NpyArray a{"<i8", {4}, std::vector<unsigned char>(32)};
  std::string bytes = SerializeNpy(a);
  EXPECT_FALSE(ParseNpy(bytes.substr(0, bytes.size() - 1)).ok());  // truncated data
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_FALSE(ParseNpy(fortran).ok());
  std::string object = bytes;
  object.replace(object.find("<i8"), 3, "|O8");
  EXPECT_FALSE(ParseNpy(object).ok());
}

TEST(Npy, ReadsWhatNumpyWrites) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/np.npy";
  const std::string cmd = "/usr/bin/python3 -c \"import numpy as np; np.save('" + path +
                          "', np.arange(6, dtype=np.int64).reshape(2, 3))\"";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "numpy is not available";
  absl::StatusOr<NpyArray> a = ReadNpy(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, "<i8");
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  int64_t last = 0;
  std::memcpy(&last, a->data.data() + 40, 8);
  EXPECT_EQ(last, 5);
  // And numpy reads what we write.
  ASSERT_TRUE(WriteNpy(path, *a).ok());
  const std::string check = "/usr/bin/python3 -c \"import numpy as np, sys; a = np.load('" + path +
                            "'); sys.exit(0 if a.shape == (2, 3) and a[1, 2] == 5 else 1)\"";
  EXPECT_EQ(std::system(check.c_str()), 0);
}

}  // namespace
}  // namespace inferd
