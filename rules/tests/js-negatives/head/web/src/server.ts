import cors from "cors";
import express from "express";

const app = express();
app.use(
  cors({
    origin: "*",
    // ok: js/retry-admits-post
    methods: ["GET", "HEAD", "POST"],
    allowedHeaders: ["Content-Type", "Authorization"],
  }),
);

export default app;
