from memconform.cli import main

main()
